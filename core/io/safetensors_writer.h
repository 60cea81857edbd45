#pragma once
// A generic safetensors writer: named tensors plus a __metadata__ string map, written atomically.
#include "tensor/tensor.h"

#include <map>
#include <string>
#include <vector>

namespace ql {

struct NamedTensor {
    std::string name;
    Tensor tensor;
};

/// Tensors are laid out in the given order; the header is padded with spaces to a multiple of 8
/// bytes, as the reference writer does, so every tensor starts 8-byte aligned relative to it.
/// Throws FileError for duplicate or empty names, dtypes safetensors cannot name (I4/U4/F4/E8M0:
/// pack or widen first), or any I/O failure; the target is then left untouched.
void writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {},
                      const std::string& sourcePath = {});

} // namespace ql
