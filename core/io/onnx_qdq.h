#pragma once
// QDQ weights: a DequantizeLinear node over constant inputs, described (scheme, axis, block size)
// and computed exactly as the ONNX operator defines it. Internal to the ONNX source.
#include "io/onnx_source.h"

#include <onnx/onnx_pb.h> // onnx-ml.pb.h (ONNX_ML, set by the onnx_proto target)
#include <string>
#include <vector>

namespace ql::onnxio {

/// The QdqWeight of `node` (opset 10-23 DequantizeLinear: attributes axis, default 1, and
/// block_size, default 0), or throws FileError "<model>: <output>: <reason>" when its constant
/// inputs do not fit together (types, scale or zero-point shapes, axis out of range).
QdqWeight describeQdq(const onnx::NodeProto& node, const std::string& output, const OnnxEntry& x,
                      const OnnxEntry& scale, const OnnxEntry* zeroPoint, const std::string& model);

/// out[j] = (x[first + j] - zero_point[k]) * scale[k] in f32 for j < count, k the scale entry of that
/// element. `codes` holds x's elements [first, first + count) unpacked; `zeroPoints` is null when the
/// node has none. Integer differences are exact (int64) before the one conversion to f32.
void dequantizeRange(const QdqWeight& q, const Shape& shape, const Tensor& codes,
                     const std::vector<float>& scales, const Tensor* zeroPoints, std::int64_t first,
                     std::int64_t count, float* out);

} // namespace ql::onnxio
