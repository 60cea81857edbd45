#include "quant/calibration.h"

#include "base/error.h"
#include "quant/calibration_search.h"

#include <algorithm>
#include <cmath>

namespace ql {
namespace {

std::vector<GroupRange> groupRanges(const ResolvedSpec& plan, std::span<const float> x) {
    std::vector<GroupRange> r(static_cast<std::size_t>(plan.scaleCount));
    ScaleIndexer(plan.layout, plan.shape).forEach([&](std::int64_t i, std::int64_t s) {
        r[static_cast<std::size_t>(s)].add(x[static_cast<std::size_t>(i)]);
    });
    return r;
}

// Each group's finite values in row-major order.
std::vector<std::vector<float>> groupValues(const ResolvedSpec& plan, std::span<const float> x) {
    std::vector<std::vector<float>> groups(static_cast<std::size_t>(plan.scaleCount));
    ScaleIndexer(plan.layout, plan.shape).forEach([&](std::int64_t i, std::int64_t s) {
        const float v = x[static_cast<std::size_t>(i)];
        if (std::isfinite(v)) groups[static_cast<std::size_t>(s)].push_back(v);
    });
    return groups;
}

QuantParams calibrateBlocks(const ResolvedSpec& plan, std::span<const float> x) {
    const bool mx = plan.spec.preset == Preset::MX;
    const auto ranges = groupRanges(plan, x);
    QuantParams p;
    if (!mx) {
        float amax = 0.0f;
        for (const auto& g : ranges)
            amax = std::max(amax, g.absMax());
        p.tensorScale = nvfp4TensorScale(amax);
    }
    const int emax = mx ? maxExponent(miniFloatOf(plan.codeTarget)) : 0;
    for (const auto& g : ranges)
        p.scaleCodes.push_back(mx ? mxScaleCode(g.absMax(), g.nan, emax)
                                  : nvfp4ScaleCode(g.absMax(), p.tensorScale));
    if (plan.spec.calibration.method == CalibMethod::Mse) {
        const auto values = groupValues(plan, x);
        for (std::size_t g = 0; g < values.size(); ++g)
            p.scaleCodes[g] = mseBlockCode(values[g], p.scaleCodes[g], p.tensorScale, plan);
    }
    for (std::uint8_t code : p.scaleCodes)
        p.scales.push_back(blockScale(plan, code, p.tensorScale));
    return p;
}

} // namespace

float operatorScaleFromStep(double step, const Convention& c) {
    switch (c.scaleOp) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal:
        return static_cast<float>(step);
    case ScaleOp::Multiply:
        return static_cast<float>(1.0 / step);
    case ScaleOp::MultiplyTwice:
        return static_cast<float>(std::sqrt(1.0 / step));
    }
    return static_cast<float>(step);
}

double stepFromOperatorScale(float scale, const Convention& c) {
    const double s = scale;
    switch (c.scaleOp) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal:
        return s;
    case ScaleOp::Multiply:
        return 1.0 / s;
    case ScaleOp::MultiplyTwice:
        return 1.0 / (s * s);
    }
    return s;
}

QuantParams calibrate(const ResolvedSpec& plan, std::span<const float> x) {
    if (isBlockFormat(plan.spec.preset)) return calibrateBlocks(plan, x);
    checkCalibrationRequest(plan);

    const Calibration& cal = plan.spec.calibration;
    const bool symmetric = plan.spec.symmetric;
    const auto ranges = groupRanges(plan, x);
    std::vector<GroupClip> clips(ranges.size());
    if (cal.method == CalibMethod::AbsMax || cal.method == CalibMethod::MinMax) {
        for (std::size_t g = 0; g < ranges.size(); ++g)
            clips[g].range = {ranges[g].lo, ranges[g].hi};
    } else if (cal.method == CalibMethod::Percentile) {
        auto values = groupValues(plan, x);
        for (std::size_t g = 0; g < values.size(); ++g)
            clips[g] = percentileRange(values[g], cal.percentile, symmetric);
    } else {
        const bool mse = cal.method == CalibMethod::Mse;
        const int levels = entropyLevels(plan);
        const auto values = groupValues(plan, x);
        for (std::size_t g = 0; g < values.size(); ++g) {
            const HistogramGeometry geo =
                mse ? mseGeometry(ranges[g], symmetric) : entropyGeometry(ranges[g], levels);
            std::vector<std::uint32_t> hist(static_cast<std::size_t>(geo.bins), 0);
            for (float v : values[g])
                if (geo.bins > 0) ++hist[static_cast<std::size_t>(geo.binOf(mse ? v : std::fabs(v)))];
            clips[g] = mse ? mseSearch(ranges[g], hist, plan) : entropySearch(ranges[g], hist, levels);
        }
    }
    return paramsFromClips(plan, clips, ranges);
}

QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to) {
    QuantParams out = p;
    for (float& s : out.scales)
        s = operatorScaleFromStep(stepFromOperatorScale(s, from), to);
    return out;
}

} // namespace ql
