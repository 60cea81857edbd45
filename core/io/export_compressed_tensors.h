#pragma once
// compressed-tensors checkpoints that vLLM's and transformers' loaders accept: each quantized tensor in
// the exact layout of its compressed-tensors format, and the config.json "quantization_config" that
// names the formats, the per-group arguments and the modules they apply to.
#include "io/export.h"
#include "io/safetensors_writer.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ql {

/// How one quantized tensor is stored in compressed-tensors terms. Building it checks that
/// compressed-tensors' dequantization, (q - zp) * weight_scale, reproduces QuantLens's x̂.
struct CompressedTensorsArgs {
    std::string format; // "int-quantized", "pack-quantized", "float-quantized", "nvfp4-pack-quantized", ...
    nlohmann::json weights;      // the QuantizationArgs of its config group (num_bits, type, strategy, ...)
    std::int64_t codeOffset = 0; // added to QuantLens's codes and zero points: -2^(b-1) for unsigned targets
};
/// Throws FileError naming `file`, the tensor, the preset and the reason when the tensor cannot be
/// written in any compressed-tensors format (the message points to --export-layout native).
CompressedTensorsArgs compressedTensorsArgs(const QuantizedTensor& q, const std::string& file);

/// The tensors one quantized tensor becomes: "x.weight" (8-bit) or "x.weight_packed" + "x.weight_shape",
/// "x.weight_scale" in `scaleDType` (the source weight's F32 / BF16 / F16; FP4 formats store their
/// scale codes), "x.weight_zero_point" when asymmetric, "x.weight_global_scale" for NVFP4.
/// `description` receives what the quantlens metadata says about the layout.
std::vector<NamedTensor> compressedTensorsTensors(const QuantizedTensor& q, const CompressedTensorsArgs& args,
                                                  DType scaleDType, const std::string& file,
                                                  nlohmann::json& description);

/// The name a tensor is stored under in a compressed-tensors checkpoint, whose loaders quantize a
/// module's "weight": a name ending in ".weight" is kept; any other (Paddle's "conv2d_42.w_0", ONNX's
/// "onnx::MatMul_7") becomes "<name>.weight", characters a module path cannot hold (other than
/// letters, digits, '_' and '.') written as '_'. The export's metadata records the source name
/// beside it ("name" and "stored_as"), so readers match it with the original.
std::string compressedTensorsName(const std::string& name);
/// Throws FileError naming the file, both tensors and the reason when two of the export's tensors (the
/// quantized ones under their stored names, the kept ones under their own) would take one name.
void checkCompressedTensorsNames(const std::vector<QuantizedTensor>& tensors, const ExportExtras& extras,
                                 const std::string& file);

/// A config.json ready to be written beside an export.
struct CompressedTensorsConfig {
    std::string path; // <export's folder>/config.json
    std::string text;
};
/// Whether a config.json may be written beside an export at `exportPath`: never in the input model's
/// own folder (`sourcePath`'s), nor over a config.json that is neither a QuantLens export's nor a
/// copy of the source's. Throws FileError naming the reason; else returns the source's config.json
/// (empty when it has none). Cheap: callers check it before any work starts.
nlohmann::json checkConfigTarget(const std::string& exportPath, const std::string& sourcePath);
/// Builds config.json for an export at `exportPath`: the source model's config.json (the file beside
/// `sourcePath`) when it has one, else a minimal one, with "quantization_config" added or replaced.
/// Checks everything before anything is written: every tensor's format, names that stay distinct once
/// stored, and that an existing config.json there is ours (a previous export's) or a copy of the
/// source's; never the model's own config.json. Throws FileError otherwise. Targets and `ignore` name
/// modules by their stored names (compressedTensorsName).
CompressedTensorsConfig compressedTensorsConfig(const std::string& exportPath,
                                                const std::vector<QuantizedTensor>& tensors,
                                                const ExportExtras& extras, const std::string& sourcePath);
/// Writes it atomically.
void writeCompressedTensorsConfig(const CompressedTensorsConfig& config);

} // namespace ql
