#pragma once
// Writing quantized weights that other tools load. Every write goes to a temporary file in the
// target folder and is renamed into place; on any error or cancel the target is left untouched.
#include "io/safetensors_writer.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ql {

struct QuantizedTensor {
    std::string name; // the source tensor's name, e.g. "model.layers.0.mlp.down_proj.weight"
    ResolvedSpec plan;
    QuantParams params;
    Codes codes;
};

enum class ExportLayout {
    CompressedTensors, // weight / weight_packed + weight_shape, weight_scale, weight_zero_point
    Native,            // what the operator emits: torch quint4x2 bytes, Ascend int32 words, raw fp codes
};

/// The layouts a safetensors export can be written in, as quantlens-cli quantize --export-layout
/// names them and the app's export dialog offers them: one table for both front ends.
struct ExportLayoutInfo {
    ExportLayout layout;
    std::string_view name;        // the CLI's word
    std::string_view description; // one line a person can read
};
std::span<const ExportLayoutInfo> exportLayouts();
const ExportLayoutInfo& exportLayoutInfo(ExportLayout layout);

/// Tensor names an export writes for one quantized tensor. compressed-tensors style: "x.weight"
/// gives "x.weight" (8-bit codes) or "x.weight_packed" + "x.weight_shape" (packed sub-byte codes),
/// "x.weight_scale", "x.weight_zero_point" and, for NVFP4, "x.weight_global_scale".
struct ExportNames {
    std::string codes;
    std::string shape; // empty unless the codes are packed
    std::string scale;
    std::string zeroPoint;
    std::string globalScale;
};
ExportNames exportNames(const std::string& name, bool packed);

/// What a whole-model export holds besides the quantized tensors: the tensors the spec did not apply
/// to, written unchanged so the export is a complete checkpoint (llm-compressor's `ignore`), and the
/// tensors that failed, listed in the metadata with their reasons.
struct ExportExtras {
    std::vector<NamedTensor> kept;
    std::vector<std::pair<std::string, std::string>> failed; // name, reason
};

/// safetensors with a __metadata__ entry "quantlens" holding the specs as JSON (and the names of the
/// kept and failed tensors). `sourcePath` (may be empty) is refused as a target: writing over the
/// file being read.
void exportSafetensors(const std::string& path, const std::vector<QuantizedTensor>& tensors,
                       ExportLayout layout, const std::string& sourcePath = {},
                       const ExportExtras& extras = {});
/// HDF5: one group per tensor with codes, scale, zero point datasets and the spec as attributes; kept
/// tensors as plain datasets under their own names.
void exportHdf5(const std::string& path, const std::vector<QuantizedTensor>& tensors,
                const std::string& sourcePath = {}, const ExportExtras& extras = {});

} // namespace ql
