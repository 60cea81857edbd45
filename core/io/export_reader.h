#pragma once
// QuantLens's own exports read back: the safetensors export in either layout (compressed-tensors,
// native) and the HDF5 export describe each quantized tensor in their metadata (its plan, and which
// of the file's tensors hold its codes, scales and zero points), so a reader can rebuild the codes and
// parameters the run produced and the values they stand for, under the source tensor's own name.
#include "io/export.h"
#include "io/tensor_source.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ql {

/// One quantized tensor of an export.
struct ExportedEntry {
    std::string name;               // the source tensor's name: what it is matched with
    std::vector<std::string> parts; // the file's tensors it is stored in (codes, shape, scale, ...)
    nlohmann::json description;     // what the export's metadata says about it
    std::string group;              // HDF5: the group holding its datasets; empty for safetensors
};

/// The quantized tensors of a QuantLens export, in the export's order; empty when `source` is not
/// one. Throws FileError naming the file when its QuantLens metadata is not what QuantLens writes.
std::vector<ExportedEntry> exportedEntries(const TensorSource& source);

/// The entry's plan, parameters and codes, unpacked from the layout its description names (the
/// compressed-tensors offsets and packing undone, NVFP4's and MX's scales rebuilt from their codes).
/// Throws FileError naming the file, the tensor and the reason when the parts do not fit the plan.
QuantizedTensor readExported(const TensorSource& source, const ExportedEntry& entry);

/// The values the entry stands for: its codes dequantized with its plan's own arithmetic, row-major.
std::vector<float> exportedValues(const QuantizedTensor& q);

} // namespace ql
