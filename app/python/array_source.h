#pragma once
// A NumPy array (any object with the buffer protocol) as the one tensor of a TensorSource, so that
// core's job reads it as it reads a memory-mapped file: in place, never copied by the binding.
#include "io/tensor_source.h"

#include <optional>
#include <pybind11/pybind11.h>
#include <string>

namespace ql::py {

/// The array's buffer, held for as long as this object lives (released with the GIL held).
struct ArrayInput {
    pybind11::buffer_info buffer;
    Tensor tensor; // borrows buffer.ptr
};

/// Reads `x` through the buffer protocol: C-contiguous float32, float16, or uint16 holding bf16 bits
/// with input_dtype "bf16" (NumPy has no bfloat16). Throws pybind11::type_error for another element
/// type, pybind11::value_error for a layout the job cannot read in place.
ArrayInput readArray(pybind11::handle x, const std::optional<std::string>& inputDtype);

/// One tensor named `name`, borrowed from an ArrayInput that outlives the source.
class ArraySource : public TensorSource {
public:
    ArraySource(std::string name, const Tensor& tensor);
    const std::string& path() const override { return m_path; }
    const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
    Tensor load(const std::string& name) const override;
    Tensor loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const override;

private:
    std::string m_path = "<array>";
    std::vector<TensorInfo> m_tensors;
    Tensor m_tensor;
};

} // namespace ql::py
