// The scalar oracle. One IEEE binary32 operation per step, in each operator's order (spec §1-§6);
// this file is compiled with -ffp-contract=off so no step is fused into an FMA.
#include "quant/reference.h"

#include "base/error.h"
#include "quant/inverse_scale.h"

#include <cmath>
#include <limits>
#include <string>

namespace ql {
namespace {

float roundValue(float t, Rounding r) {
    switch (r) {
    case Rounding::HalfToEven:
        return std::nearbyint(t);
    case Rounding::HalfAwayFromZero:
        return std::round(t);
    case Rounding::Floor:
        return std::floor(t);
    case Rounding::Ceil:
        return std::ceil(t);
    case Rounding::Trunc:
        return std::trunc(t);
    }
    return t;
}

// torch's static_cast<int64_t>(float) is UB out of range; x86 (cvttss2si) yields INT64_MIN.
std::int64_t x86CastToInt64(float v) {
    constexpr float kLimit = 9223372036854775808.0f; // 2^63
    if (!(v >= -kLimit && v < kLimit)) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(v);
}

std::int32_t clampToRange(double v, const ResolvedSpec& plan) {
    const double lo = static_cast<double>(plan.qmin()), hi = static_cast<double>(plan.qmax());
    return static_cast<std::int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

float scaled(float x, float scale, const Convention& c) {
    switch (c.scaleOp) {
    case ScaleOp::Divide:
        return x / scale;
    case ScaleOp::MultiplyReciprocal: {
        const float inv = (c.zeroScaleMeansOne && scale == 0.0f) ? 1.0f : 1.0f / scale;
        return x * inv;
    }
    case ScaleOp::Multiply:
        return x * scale;
    case ScaleOp::MultiplyTwice: {
        const float once = x * scale; // A2/A3 kernel order (x*s)*s, not x*(s*s)
        return once * scale;
    }
    }
    return x;
}

} // namespace

std::int32_t quantizeValue(float x, float scale, float zeroPoint, const ResolvedSpec& plan) {
    const Convention& c = plan.convention;
    if (c.zeroScaleGivesZero && scale == 0.0f) return 0;
    float t = scaled(x, scale, c);

    if (isFloatTarget(plan.codeTarget)) return encodeMiniFloat(t, miniFloatOf(plan.codeTarget), c.overflow);

    if (c.zeroPoint == ZeroPointStage::BeforeRounding) t = t + zeroPoint;
    const float r = roundValue(t, c.rounding);

    if (c.nan == NanPolicy::X86IntCast) {
        // torch: q = (int64)(zero_point + nearbyint(x * inv)), the sum evaluated in fp32 (spec §5).
        const float sum = c.zeroPoint == ZeroPointStage::AfterRounding ? zeroPoint + r : r;
        return clampToRange(static_cast<double>(x86CastToInt64(sum)), plan);
    }
    if (std::isnan(r)) return clampToRange(0.0, plan);
    const float q = c.zeroPoint == ZeroPointStage::AfterRounding ? r + zeroPoint : r;
    return clampToRange(static_cast<double>(q), plan);
}

float codeValue(std::int32_t code, float zeroPoint, const ResolvedSpec& plan) {
    return isFloatTarget(plan.codeTarget)
               ? decodeMiniFloat(static_cast<std::uint8_t>(code), miniFloatOf(plan.codeTarget))
               : static_cast<float>(code) - zeroPoint;
}

float dequantizeValue(std::int32_t code, float scale, float zeroPoint, const ResolvedSpec& plan) {
    return applyInverseScale(codeValue(code, zeroPoint, plan), scale, plan.convention.scaleOp);
}

void checkParams(const ResolvedSpec& plan, const QuantParams& params) {
    const auto need = static_cast<std::size_t>(plan.scaleCount);
    if (params.scales.size() != need)
        throw QuantError("expected " + std::to_string(need) + " scales (shape " + toString(plan.scaleShape) +
                         ") but got " + std::to_string(params.scales.size()));
    const Preset preset = plan.spec.preset;
    for (std::size_t i = 0; i < params.scales.size(); ++i) {
        const float s = params.scales[i];
        const bool zeroAllowed = plan.convention.zeroScaleGivesZero || plan.convention.zeroScaleMeansOne;
        if (std::isnan(s) && preset == Preset::MX) continue; // E8M0 0xFF: a NaN block stays NaN
        if (!std::isfinite(s) || (s == 0.0f && !zeroAllowed))
            throw QuantError("scale " + std::to_string(i) + " is " + std::to_string(s) +
                             ": scales must be finite and non-zero");
        // aclnnQuantize and Ascend/pypto accept negative scales (spec §7.3 V-A1); torch and TRT do not.
        if (s < 0.0f && (preset == Preset::Torch || preset == Preset::TensorRT))
            throw QuantError("scale " + std::to_string(i) + " is negative; " + std::string(nameOf(preset)) +
                             " needs positive scales");
    }
    if (plan.spec.symmetric) {
        for (float z : params.zeroPoints)
            if (z != 0.0f)
                throw QuantError("a symmetric spec has no zero point (got " + std::to_string(z) + ")");
        return;
    }
    const std::size_t zpNeed = plan.scalarZeroPoint ? 1 : need;
    if (!params.zeroPoints.empty() && params.zeroPoints.size() != zpNeed)
        throw QuantError("expected " + std::to_string(zpNeed) + " zero points but got " +
                         std::to_string(params.zeroPoints.size()));
    const bool integral =
        preset == Preset::AclnnQuantize ||
        (preset == Preset::Torch && plan.convention.zeroPoint == ZeroPointStage::AfterRounding);
    for (std::size_t i = 0; i < params.zeroPoints.size(); ++i) {
        const float z = params.zeroPoints[i];
        if (!std::isfinite(z)) throw QuantError("zero point " + std::to_string(i) + " is not finite");
        if (integral && z != std::trunc(z))
            throw QuantError("zero point " + std::to_string(i) + " is " + std::to_string(z) + "; " +
                             std::string(nameOf(preset)) + " takes integer zero points");
        if (preset == Preset::Torch && (z < plan.qmin() || z > plan.qmax()))
            throw QuantError("zero point " + std::to_string(i) + " (" + std::to_string(z) +
                             ") is outside the range of " + std::string(nameOf(plan.spec.target)));
    }
}

Codes quantizeReference(const ResolvedSpec& plan, const QuantParams& params, std::span<const float> x) {
    if (static_cast<std::int64_t>(x.size()) != elementCount(plan.shape))
        throw QuantError("input has " + std::to_string(x.size()) + " elements but the plan's shape " +
                         toString(plan.shape) + " needs " + std::to_string(elementCount(plan.shape)));
    checkParams(plan, params);
    Codes codes(plan.codeTarget, static_cast<std::int64_t>(x.size()), Codes::Uninitialized{});
    ScaleIndexer indexer(plan.layout, plan.shape);
    indexer.forEach([&](std::int64_t i, std::int64_t s) {
        const float scale = params.scales[static_cast<std::size_t>(s)];
        codes.set(i, quantizeValue(x[static_cast<std::size_t>(i)], scale, params.zeroPointOf(s), plan));
    });
    return codes;
}

std::vector<float> dequantizeReference(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes) {
    std::vector<float> out(static_cast<std::size_t>(codes.size()));
    ScaleIndexer indexer(plan.layout, plan.shape);
    indexer.forEach([&](std::int64_t i, std::int64_t s) {
        out[static_cast<std::size_t>(i)] = dequantizeValue(
            codes.at(i), params.scales[static_cast<std::size_t>(s)], params.zeroPointOf(s), plan);
    });
    return out;
}

} // namespace ql
