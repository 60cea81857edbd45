#pragma once
// Sub-byte packing: what the operators themselves emit, and the compressed-tensors layout.
#include "quant/params.h"
#include "tensor/shape.h"

#include <cstdint>
#include <vector>

namespace ql {

/// Two codes per byte over the flattened tensor, even element in the low nibble (torch quint4x2,
/// Ascend int4, FP4 E2M1). An odd count leaves the last high nibble zero.
std::vector<std::uint8_t> packNibbles(const Codes& codes);
Codes unpackNibbles(const std::vector<std::uint8_t>& bytes, Target target, std::int64_t count);

/// Eight signed int4 per int32 word along the last axis (Ascend dstType 3, npu_group_quant quint4x2):
/// element 8j+i in bits 4i..4i+3. The last dimension must be a multiple of 8.
std::vector<std::int32_t> packInt32Words(const Codes& codes, const Shape& shape);
Codes unpackInt32Words(const std::vector<std::int32_t>& words, const Shape& shape);

/// compressed-tensors "pack-quantized": 4-bit values offset-binary (signed value + 8), eight per
/// int32 along the last axis, element 8j+i in bits 4i..4i+3; a short last word is zero-padded.
std::vector<std::int32_t> packCompressedTensors(const Codes& codes, const Shape& shape);
Codes unpackCompressedTensors(const std::vector<std::int32_t>& words, const Shape& shape, Target target);

} // namespace ql
