#pragma once
// Turning a QuantizedTensor into plain tensors, shared by the safetensors and HDF5 exporters.
#include "io/export.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace ql {

/// Throws FileError naming the file and tensor when codes, scales or zero points do not fit the plan.
void checkQuantizedTensor(const QuantizedTensor& q, const std::string& file);
/// Unpacked codes, one per element with the plan's shape: I8/U8/I32 for integers, F8 for fp8, U8
/// raw bits for fp4.
Tensor codesTensor(const QuantizedTensor& q);
/// Two FP4 codes per byte along each row, low nibble first; a short last byte is zero-padded.
Tensor packFp4Rows(const Codes& codes, const Shape& shape);

struct ScaleTensors {
    Tensor scale;       // F32, or the scale codes: U8 (MX E8M0), F8_E4M3 (NVFP4 block scales)
    Tensor zeroPoint;   // empty when symmetric; integral values in the code range use the code dtype
    Tensor globalScale; // NVFP4 fp32 tensor scale [1], else empty
    std::string encoding;
    bool hasZeroPoint() const { return zeroPoint.data() != nullptr; }
    bool hasGlobalScale() const { return globalScale.data() != nullptr; }
};
ScaleTensors scaleTensors(const QuantizedTensor& q, const std::string& file);

/// How QuantLens stores one quantized tensor's parameters (scaleTensors writes them so): a scale per
/// group in F32, or the format's scale codes (MX: an E8M0 byte per block, NVFP4: an F8_E4M3 per block
/// plus its F32 tensor scale); zero points, when there are any, in the code dtype if every one given
/// is a whole number in the code range, else in F32 (the float offsets of Ascend, pypto and
/// npu_group_quant); one zero point stands for the whole tensor.
struct ParamStorage {
    DType scale = DType::F32;
    std::int64_t scaleCount = 1;
    bool globalScale = false;
    std::optional<DType> zeroPoint;
    std::int64_t zeroPointCount = 0;
};
ParamStorage paramStorage(const ResolvedSpec& plan, std::span<const float> zeroPoints);
/// The bits one quantized tensor takes as stored: its codes at their width (4 for sub-byte targets)
/// and its parameters as paramStorage stores them. The planner's cost of a format without a
/// compressed-tensors layout, and the model summary's size after quantization.
std::int64_t quantizedBits(const ResolvedSpec& plan, std::span<const float> zeroPoints);
/// Scale tensor shape: [1] for per-tensor, else the plan's scale shape.
Shape exportScaleShape(const ResolvedSpec& plan);

} // namespace ql
