#pragma once
// A QDQ ONNX export: the source model with each quantized weight stored as its integer codes
// behind a DequantizeLinear node (scale, zero point, and the axis / block_size attributes), the
// explicit-quantization input TensorRT and Ascend ATC take. Weights may be initializers or Constant
// nodes of the main graph. Integer codes only: int8/uint8 per-tensor (opset 10), per-channel (opset
// 13), int4/uint4 and blocked scales (opset 21). The model's opset import is raised only when a
// weight needs it, and then only when ONNX Runtime accepts the raised model. Written atomically: on
// any error the target is untouched. A build without ONNX support refuses with the reason.
#include "io/export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace ql {

/// True for an ONNX file name (.onnx).
inline bool isOnnxExport(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".onnx";
}

/// Why a QDQ export of the model at `modelPath` cannot store a quantized tensor (empty: it can). The
/// model is read once, when the function is made; a tensor not among its main graph's float32
/// initializers and Constants, fp8, MX, NVFP4, scales on two axes and dequantization that
/// DequantizeLinear's (x - zero_point) * scale does not reproduce bit for bit are refused.
std::function<std::string(const QuantizedTensor&)> onnxQdqRefusals(const std::string& modelPath);

/// Writes `modelPath` with `tensors` (each must pass the refusals) as QDQ weights to `path`; every
/// other tensor stays as it is. Throws FileError, writing nothing, when the model cannot be read or
/// rewritten, a tensor is refused, or the runtime refuses a raised opset.
void exportOnnxQdq(const std::string& path, const std::vector<QuantizedTensor>& tensors,
                   const std::string& modelPath);

} // namespace ql
