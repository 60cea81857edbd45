#pragma once
// The cuda backend's per-element arithmetic, written once for both sides: nvcc compiles it into the
// kernels and g++ into tst_cuda_element, which checks it bit for bit against the oracle
// (ql::quantizeValue) on every machine, GPU or not. It uses only what is exactly rounded and present
// on both sides: IEEE + - * /, rintf / roundf / floorf / ceilf / truncf, integer and bit arithmetic
// (no std:: maths, no double). Compile it without FMA contraction: nvcc -fmad=false, g++
// -ffp-contract=off, as the oracle is.
#include "quant/convention.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define QL_HD __host__ __device__
#else
#define QL_HD
#endif

namespace ql::cuda {

QL_HD inline std::uint32_t bitsOf(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
#endif
}

QL_HD inline float floatOf(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, 4);
    return f;
#endif
}

/// Index of the highest set bit of v (v != 0).
QL_HD inline int highestBit(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
    return 31 - __clz(v);
#else
    return 31 - __builtin_clz(v);
#endif
}

// ---- narrow floats (spec §6.1) ----

/// A mini-float format as the encoder needs it; built by miniFloatSpec().
struct MiniFloatSpec {
    std::int32_t mantBits;
    std::int32_t bias;
    std::int32_t maxCode; // magnitude code of the largest finite value (448 -> 0x7E, 57344 -> 0x7B, 6 -> 0x7)
    std::uint32_t signBit; // 7 for FP8, 3 for FP4
    std::uint32_t nanCode; // E4M3FN S.1111.111, E5M2 S.11111.10 (quiet)
    std::uint32_t infCode; // E5M2 S.11111.00
    bool hasNan;
    bool hasInf;
};

QL_HD constexpr MiniFloatSpec miniFloatSpec(MiniFloat fmt) {
    switch (fmt) {
    case MiniFloat::E4M3FN:
        return {3, 7, 0x7E, 7, 0x7F, 0, true, false};
    case MiniFloat::E5M2:
        return {2, 15, 0x7B, 7, 0x7E, 0x7C, true, true};
    case MiniFloat::E2M1:
        break;
    }
    return {1, 1, 0x7, 3, 0, 0, false, false};
}

/// encodeMiniFloat (core/tensor/float_formats.cpp) in integer arithmetic: round to nearest, ties to
/// even on the target mantissa, subnormals kept, overflow as `saturate` says.
QL_HD inline std::uint8_t encodeMiniFloatBits(float x, const MiniFloatSpec& f, bool saturate) {
    const std::uint32_t u = bitsOf(x);
    const std::uint32_t mag = u & 0x7FFFFFFFu;
    const std::uint32_t sign = (u >> 31) << f.signBit;
    if (mag > 0x7F800000u) // NaN; E2M1 has none and gives +max, sign dropped (pypto golden)
        return static_cast<std::uint8_t>(f.hasNan ? (sign | f.nanCode)
                                                  : static_cast<std::uint32_t>(f.maxCode));
    // E2M1 has neither Inf nor NaN to overflow into, so it always saturates.
    const std::uint32_t overflow =
        (saturate || !f.hasNan) ? static_cast<std::uint32_t>(f.maxCode) : (f.hasInf ? f.infCode : f.nanCode);
    if (mag == 0x7F800000u) return static_cast<std::uint8_t>(sign | overflow);
    if (mag == 0) return static_cast<std::uint8_t>(sign);
    // |x| = sig * 2^k exactly, and e = floor(log2 |x|).
    const int biased = static_cast<int>(mag >> 23);
    const std::uint32_t sig = biased ? (mag & 0x7FFFFFu) | 0x800000u : mag;
    const int k = biased ? biased - 150 : -149;
    const int e = biased ? biased - 127 : highestBit(mag) - 149;
    // The target's exponent (its subnormals share the smallest one) and the shift that brings |x|
    // to units of the target's quantum there; the quantum is at least 2^20 float ulps, so shift >= 20.
    const int minExp = 1 - f.bias;
    const int ex = e > minExp ? e : minExp;
    const int shift = ex - f.mantBits - k;
    std::uint32_t rounded = 0; // below a quarter quantum when shift >= 32: rounds to zero
    if (shift < 32) {
        const std::uint32_t half = 1u << (shift - 1);
        const std::uint32_t rem = sig & ((half << 1) - 1u);
        rounded = sig >> shift;
        if (rem > half || (rem == half && (rounded & 1u))) ++rounded;
    }
    // Exponent field and mantissa in one sum: a mantissa that rounds up to 2^(mantBits+1) carries
    // into the exponent, and a subnormal (ex == minExp, field 1 minus the implicit bit) stays itself.
    const int code = ((ex + f.bias) << f.mantBits) + static_cast<int>(rounded) - (1 << f.mantBits);
    if (code > f.maxCode) return static_cast<std::uint8_t>(sign | overflow);
    return static_cast<std::uint8_t>(sign | static_cast<std::uint32_t>(code));
}

// ---- 16-bit inputs, widened exactly as core's Tensor::toFloat does ----

struct Bf16 {
    std::uint16_t bits;
};
struct Half {
    std::uint16_t bits;
};

QL_HD inline float widen(float v) {
    return v;
}
QL_HD inline float widen(Bf16 v) {
    return floatOf(static_cast<std::uint32_t>(v.bits) << 16);
}
QL_HD inline float widen(Half v) {
    const std::uint32_t sign = static_cast<std::uint32_t>(v.bits & 0x8000u) << 16;
    const std::uint32_t exp = (v.bits >> 10) & 0x1Fu;
    const std::uint32_t mant = v.bits & 0x3FFu;
    if (exp == 0x1F) return floatOf(sign | 0x7F800000u | (mant << 13)); // Inf, NaN with its payload
    if (exp != 0) return floatOf(sign | ((exp - 15 + 127) << 23) | (mant << 13));
    if (mant == 0) return floatOf(sign);
    // Subnormal half: mant * 2^-24, normal as a float.
    const int top = highestBit(mant);
    return floatOf(sign | (static_cast<std::uint32_t>(top - 24 + 127) << 23) |
                   ((mant << (23 - top)) & 0x7FFFFFu));
}

// ---- integer and float codes (ql::quantizeValue, step for step) ----

/// Everything quantizeValue reads from a plan, as a trivially copyable kernel argument.
struct ElementOp {
    ScaleOp scaleOp;
    ZeroPointStage zeroPoint;
    Rounding rounding;
    NanPolicy nan;
    bool floatTarget;
    bool saturate; // Overflow::Saturate
    bool zeroScaleMeansOne;
    bool zeroScaleGivesZero;
    MiniFloatSpec fmt;
    std::int64_t qmin;
    std::int64_t qmax;
};

/// What the scale becomes before it meets x: 1/s for the reciprocal convention, s itself otherwise.
/// Depends on the scale alone, so a vector of elements sharing a scale computes it once.
template <ScaleOp Op> QL_HD inline float scaleOperand(float scale, bool zeroScaleMeansOne) {
    if constexpr (Op == ScaleOp::MultiplyReciprocal)
        return (zeroScaleMeansOne && scale == 0.0f) ? 1.0f : 1.0f / scale;
    return scale;
}

template <ScaleOp Op> QL_HD inline float applyOperand(float x, float operand) {
    if constexpr (Op == ScaleOp::Divide) {
        return x / operand;
    } else if constexpr (Op == ScaleOp::MultiplyTwice) {
        const float once = x * operand; // A2/A3 kernel order (x*s)*s, not x*(s*s)
        return once * operand;
    } else {
        return x * operand; // the reciprocal, or the inverse step itself
    }
}

QL_HD inline float roundTo(float t, Rounding r) {
    switch (r) {
    case Rounding::HalfToEven:
        return rintf(t); // = nearbyint in the default rounding mode
    case Rounding::HalfAwayFromZero:
        return roundf(t);
    case Rounding::Floor:
        return floorf(t);
    case Rounding::Ceil:
        return ceilf(t);
    case Rounding::Trunc:
        return truncf(t);
    }
    return t;
}

// torch's static_cast<int64_t>(float) is UB out of range; x86 (cvttss2si) yields INT64_MIN.
QL_HD inline std::int64_t x86CastToInt64(float v) {
    constexpr float kLimit = 9223372036854775808.0f; // 2^63
    if (!(v >= -kLimit && v < kLimit)) return -9223372036854775807LL - 1;
    return static_cast<std::int64_t>(v);
}

QL_HD inline std::int32_t clampCode(std::int64_t v, const ElementOp& op) {
    return static_cast<std::int32_t>(v < op.qmin ? op.qmin : (v > op.qmax ? op.qmax : v));
}

// The oracle clamps in double and then truncates. With integer bounds inside ±2^31, clamping the
// truncated value gives the same code, and nothing beyond ±2^62 reaches the conversion. q is never
// NaN here: r is not (handled before) and checkParams admits finite zero points only.
QL_HD inline std::int32_t clampFloatCode(float q, const ElementOp& op) {
    if (q < -0x1p62f) return static_cast<std::int32_t>(op.qmin);
    if (q > 0x1p62f) return static_cast<std::int32_t>(op.qmax);
    return clampCode(static_cast<std::int64_t>(q), op);
}

// The NaN a scaled value is when it is one. IEEE 754 leaves a NaN result's sign to the machine:
// x86, where the oracle runs, passes the NaN operand through (x when both are, as in x / s) and
// gives -NaN for an invalid operation (0 * inf, inf / inf); NVIDIA GPUs give one canonical +NaN.
// The sign reaches FP8 codes (0x7F / 0xFF), so it is chosen here as x86 chooses it.
QL_HD inline float x86NaN(float x, float scale) {
    if (x != x) return x;
    if (scale != scale) return scale;
    return floatOf(0xFFC00000u);
}

/// quantizeValue with the scale operation fixed at compile time (the kernels are built per Op),
/// given the scale and its operand (scaleOperand<Op>(scale, op.zeroScaleMeansOne)).
template <ScaleOp Op>
QL_HD inline std::int32_t quantizePrepared(float x, float scale, float operand, float zeroPoint,
                                           const ElementOp& op) {
    if (op.zeroScaleGivesZero && scale == 0.0f) return 0;
    float t = applyOperand<Op>(x, operand);
    if (op.floatTarget) return encodeMiniFloatBits(t == t ? t : x86NaN(x, scale), op.fmt, op.saturate);
    const bool after = op.zeroPoint == ZeroPointStage::AfterRounding;
    if (!after) t = t + zeroPoint;
    const float r = roundTo(t, op.rounding);
    // torch: q = (int64)(zero_point + nearbyint(x * inv)), the sum evaluated in fp32 (spec §5).
    if (op.nan == NanPolicy::X86IntCast) return clampCode(x86CastToInt64(after ? zeroPoint + r : r), op);
    if (r != r) return clampCode(0, op);
    return clampFloatCode(after ? r + zeroPoint : r, op);
}

template <ScaleOp Op>
QL_HD inline std::int32_t quantizeElementAs(float x, float scale, float zeroPoint, const ElementOp& op) {
    return quantizePrepared<Op>(x, scale, scaleOperand<Op>(scale, op.zeroScaleMeansOne), zeroPoint, op);
}

/// The same with the scale operation read at run time.
QL_HD inline std::int32_t quantizeElement(float x, float scale, float zeroPoint, const ElementOp& op) {
    switch (op.scaleOp) {
    case ScaleOp::Divide:
        return quantizeElementAs<ScaleOp::Divide>(x, scale, zeroPoint, op);
    case ScaleOp::MultiplyReciprocal:
        return quantizeElementAs<ScaleOp::MultiplyReciprocal>(x, scale, zeroPoint, op);
    case ScaleOp::Multiply:
        return quantizeElementAs<ScaleOp::Multiply>(x, scale, zeroPoint, op);
    case ScaleOp::MultiplyTwice:
        return quantizeElementAs<ScaleOp::MultiplyTwice>(x, scale, zeroPoint, op);
    }
    return 0;
}

} // namespace ql::cuda
