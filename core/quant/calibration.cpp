#include "quant/calibration.h"

#include <algorithm>
#include <cmath>

#include "quant/calibration_search.h"
#include "tensor/error.h"

namespace ql {
namespace {

struct GroupRange {
    float lo = 0.0f;
    float hi = 0.0f;
    bool nan = false;
};

// Finite min/max (and whether a NaN was seen) per scale group; Inf never widens a range.
std::vector<GroupRange> groupRanges(const QuantPlan& plan, std::span<const float> x) {
    std::vector<GroupRange> r(static_cast<std::size_t>(plan.scaleCount));
    ScaleIndexer(plan.layout, plan.shape).forEach([&](std::int64_t i, std::int64_t s) {
        const float v = x[static_cast<std::size_t>(i)];
        auto& g = r[static_cast<std::size_t>(s)];
        if (std::isnan(v)) g.nan = true;
        if (!std::isfinite(v)) return;
        g.lo = std::min(g.lo, v);
        g.hi = std::max(g.hi, v);
    });
    return r;
}

std::vector<std::vector<float>> groupValues(const QuantPlan& plan, std::span<const float> x) {
    std::vector<std::vector<float>> groups(static_cast<std::size_t>(plan.scaleCount));
    ScaleIndexer(plan.layout, plan.shape).forEach([&](std::int64_t i, std::int64_t s) {
        const float v = x[static_cast<std::size_t>(i)];
        if (std::isfinite(v)) groups[static_cast<std::size_t>(s)].push_back(v);
    });
    return groups;
}

float absMax(const GroupRange& g) { return std::max(std::fabs(g.lo), std::fabs(g.hi)); }

// OCP MX floor rule (spec §6.3): E8M0 code = biased exponent of amax - emax_elem, clamped to [0, 254].
QuantParams calibrateMx(const QuantPlan& plan, std::span<const float> x) {
    QuantParams p;
    const int emax = maxExponent(miniFloatOf(plan.codeTarget));
    for (const auto& g : groupRanges(plan, x)) {
        std::uint8_t code = 0xFF;
        if (!g.nan) {
            const int biased = static_cast<int>((floatBits(absMax(g)) >> 23) & 0xFF);
            code = static_cast<std::uint8_t>(std::clamp(biased - emax, 0, 254));
        }
        p.scaleCodes.push_back(code);
        p.scales.push_back(decodeE8M0(code));
    }
    return p;
}

// NVFP4 (spec §6.4): s_g = amax/(448*6); S_b = e4m3(amax_b/6 / s_g); elements divide by S_b * s_g.
QuantParams calibrateNvfp4(const QuantPlan& plan, std::span<const float> x) {
    QuantParams p;
    const auto groups = groupRanges(plan, x);
    float amax = 0.0f;
    for (const auto& g : groups) amax = std::max(amax, absMax(g));
    const float sg = amax / (448.0f * 6.0f);
    p.tensorScale = sg;
    for (const auto& g : groups) {
        std::uint8_t code = 0;
        if (sg > 0.0f) {
            const float sb = absMax(g) / 6.0f;
            code = encodeMiniFloat(sb / sg, MiniFloat::E4M3FN, Overflow::Saturate);
        }
        p.scaleCodes.push_back(code);
        p.scales.push_back(decodeMiniFloat(code, MiniFloat::E4M3FN) * sg);
    }
    return p;
}

} // namespace

float operatorScaleFromStep(double step, const Convention& c) {
    switch (c.scaleOp) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal: return static_cast<float>(step);
    case ScaleOp::Multiply: return static_cast<float>(1.0 / step);
    case ScaleOp::MultiplyTwice: return static_cast<float>(std::sqrt(1.0 / step));
    }
    return static_cast<float>(step);
}

double stepFromOperatorScale(float scale, const Convention& c) {
    const double s = scale;
    switch (c.scaleOp) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal: return s;
    case ScaleOp::Multiply: return 1.0 / s;
    case ScaleOp::MultiplyTwice: return 1.0 / (s * s);
    }
    return s;
}

QuantParams calibrate(const QuantPlan& plan, std::span<const float> x) {
    if (plan.spec.preset == Preset::MX) return calibrateMx(plan, x);
    if (plan.spec.preset == Preset::NVFP4) return calibrateNvfp4(plan, x);

    const Calibration& cal = plan.spec.calibration;
    const bool symmetric = plan.spec.symmetric;
    if (cal.method == CalibMethod::Explicit)
        throw QuantError("explicit calibration: scales (and zero points) come from the caller, not the data");
    if (cal.method == CalibMethod::MinMax && symmetric)
        throw QuantError("min-max calibration gives an asymmetric range: use --asymmetric (or --calib absmax)");
    if (cal.method == CalibMethod::Entropy && !symmetric)
        throw QuantError("entropy calibration finds a symmetric threshold: use --symmetric");
    if (!symmetric && plan.scalarZeroPoint)
        throw QuantError(std::string(nameOf(plan.spec.preset)) +
                         " takes one scalar offset for all groups: supply it with --zero-point");
    if (cal.method == CalibMethod::Percentile && !(cal.percentile > 0.0 && cal.percentile <= 100.0))
        throw QuantError("percentile must be in (0, 100]");

    std::vector<ClipRange> ranges;
    if (cal.method == CalibMethod::AbsMax || cal.method == CalibMethod::MinMax) {
        for (const auto& g : groupRanges(plan, x)) ranges.emplace_back(g.lo, g.hi);
    } else {
        for (auto& values : groupValues(plan, x)) {
            if (cal.method == CalibMethod::Percentile)
                ranges.push_back(percentileRange(values, cal.percentile, symmetric));
            else if (cal.method == CalibMethod::Mse)
                ranges.push_back(mseRange(values, plan));
            else
                ranges.push_back(entropyRange(values, plan));
        }
    }

    QuantParams p;
    for (const auto& r : ranges) {
        const auto [step, zp] = stepForRange(r, plan);
        p.scales.push_back(operatorScaleFromStep(step, plan.convention));
        if (!symmetric) p.zeroPoints.push_back(zp);
    }
    return p;
}

QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to) {
    QuantParams out = p;
    for (float& s : out.scales) s = operatorScaleFromStep(stepFromOperatorScale(s, from), to);
    return out;
}

} // namespace ql
