#pragma once
// Turning a QuantizedTensor into plain tensors, shared by the safetensors and HDF5 exporters.
#include "io/export.h"
#include "tensor/tensor.h"

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
/// Scale tensor shape: [1] for per-tensor (spec/cli.md), else the plan's scale shape.
Shape exportScaleShape(const ResolvedSpec& plan);

} // namespace ql
