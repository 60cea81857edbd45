#pragma once
// quantlens.open (a model file's tensors as NumPy views), diff, plan and check: the CLI's inspect,
// diff, plan and check jobs from Python, returning the same reports as Python objects.
#include <pybind11/pybind11.h>

namespace ql::py {

/// Registers Model, open(), diff(), plan() and check() on the module.
void registerModel(pybind11::module_& m);

} // namespace ql::py
