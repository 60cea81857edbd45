#pragma once
// Between core's values and Python's: JSON reports as dicts and lists, and NumPy arrays that view
// memory core owns (codes, scales, a mapped tensor) without copying it.
#include "tensor/dtype.h"
#include "tensor/shape.h"

#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <string>

namespace ql::py {

namespace pb = pybind11;

/// JSON to Python: objects to dicts, arrays to lists, null to None. Strings that are not UTF-8 (an
/// HDF5 name may be anything) read with U+FFFD in place of the bad bytes.
pb::object toPython(const nlohmann::json& j);
/// Python to JSON (dicts with string keys, lists, tuples, str, bool, int, float, None). Throws
/// pybind11::type_error for anything else.
nlohmann::json fromPython(pb::handle o);

/// The NumPy dtype a tensor of `t` is seen as: its own where NumPy has it, else the storage bits
/// (bf16 as uint16, fp8 / fp4 / E8M0 as uint8, int4 as int8).
pb::dtype numpyDtypeOf(DType t);

/// A read-only array over `data` (row-major `shape`, elements of `dtype`) that keeps `base` alive
/// as long as it lives: no copy.
pb::array readOnlyView(const void* data, const pb::dtype& dtype, const Shape& shape, pb::handle base);

/// A read-only array that owns `values` (moved into it, not copied).
template <typename T> pb::array ownedArray(std::vector<T>&& values, const Shape& shape) {
    auto* held = new std::vector<T>(std::move(values));
    pb::capsule owner(held, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return readOnlyView(held->data(), pb::dtype::of<T>(), shape, owner);
}

/// A copy of `values` as a read-only array.
template <typename T, typename Alloc>
pb::array copiedArray(const std::vector<T, Alloc>& values, const Shape& shape) {
    return ownedArray(std::vector<T>(values.begin(), values.end()), shape);
}

} // namespace ql::py
