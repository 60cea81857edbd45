#pragma once
// An operator's exact arithmetic: where CPU and NPU results part.
#include "tensor/float_formats.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace ql {

enum class ScaleOp : std::uint8_t {
    Divide,             // t = x / s                      (aclnnQuantize, TensorRT, MX, NVFP4)
    MultiplyReciprocal, // t = x * fl32(1 / s)            (torch quantize_per_tensor / per_channel)
    Multiply,           // t = x * s, s is the inverse step (Ascend, pypto)
    MultiplyTwice,      // t = (x * s) * s                (aclnnAscendQuantV3 sqrtMode, A2/A3 order)
};

enum class ZeroPointStage : std::uint8_t {
    BeforeRounding, // q = round(t + zp)   (aclnn, Ascend, pypto, torch quint4x2 per-channel)
    AfterRounding,  // q = fl32(zp + round(t))  (torch: int64 + float evaluates in float32)
};

enum class Rounding : std::uint8_t { HalfToEven, HalfAwayFromZero, Floor, Ceil, Trunc };

enum class NanPolicy : std::uint8_t {
    Zero,       // NaN -> code 0 (Ascend int paths, TensorRT; documented choice where unconfirmed)
    X86IntCast, // torch: float -> int64 cast is UB; x86 gives INT64_MIN, so NaN/±Inf clamp to qmin
};

enum class Packing : std::uint8_t {
    None,
    NibblesFlat, // two per byte over the flattened tensor, even element in the low nibble (torch quint4x2)
    Int32Words,  // eight signed nibbles per int32 along the last axis, element 8j+i in bits 4i..4i+3
};

struct Convention {
    ScaleOp scaleOp = ScaleOp::MultiplyReciprocal;
    ZeroPointStage zeroPoint = ZeroPointStage::AfterRounding;
    Rounding rounding = Rounding::HalfToEven;
    Overflow overflow = Overflow::Saturate;
    NanPolicy nan = NanPolicy::Zero;
    Packing packing = Packing::None;
    bool zeroScaleMeansOne = false;  // torch float-qparams path: inv = (s == 0) ? 1 : 1/s
    bool zeroScaleGivesZero = false; // NVFP4 all-zero block: scale 0 -> codes 0 (TRT-LLM)
    bool operator==(const Convention&) const = default;
};

std::string_view nameOf(ScaleOp op);
std::string_view nameOf(ZeroPointStage s);
std::string_view nameOf(Rounding r);
std::optional<Rounding> roundingFromName(std::string_view name); // "half-even" (alias "round"), ...

} // namespace ql
