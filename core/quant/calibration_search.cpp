#include "quant/calibration_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "quant/calibration.h"
#include "quant/reference.h"

namespace ql {

StepAndZero stepForRange(ClipRange range, const QuantPlan& plan) {
    const Target t = plan.codeTarget;
    if (isFloatTarget(t)) {
        const double amax = std::max(std::fabs(range.first), std::fabs(range.second));
        return {amax > 0 ? normalStep(amax / maxFinite(miniFloatOf(t))) : 1.0, 0.0f};
    }
    const double qmin = static_cast<double>(plan.qmin()), qmax = static_cast<double>(plan.qmax());
    if (plan.spec.symmetric) {
        const double amax = std::max(std::fabs(range.first), std::fabs(range.second));
        return {amax > 0 ? normalStep(amax / qmax) : 1.0, 0.0f}; // a zero range never divides by zero
    }
    const double lo = std::min(range.first, 0.0), hi = std::max(range.second, 0.0);
    const double step = hi > lo ? normalStep((hi - lo) / (qmax - qmin)) : 1.0;
    const double zp = std::clamp(qmin - std::nearbyint(lo / step), qmin, qmax);
    return {step, static_cast<float>(zp)};
}

ClipRange percentileRange(std::vector<float>& values, double percentile, bool symmetric) {
    if (values.empty()) return {0.0, 0.0};
    const auto at = [&](double p) {
        const auto k = static_cast<std::size_t>(std::llround(p / 100.0 * static_cast<double>(values.size() - 1)));
        std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
        return static_cast<double>(values[k]);
    };
    if (symmetric) {
        for (auto& v : values) v = std::fabs(v);
        const double a = at(percentile);
        return {-a, a};
    }
    const double lo = at(100.0 - percentile);
    return {lo, at(percentile)};
}

ClipRange mseRange(std::span<const float> values, const QuantPlan& plan) {
    float lo = 0.0f, hi = 0.0f;
    for (float v : values) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (plan.spec.symmetric) {
        hi = std::max(-lo, hi);
        lo = -hi;
    }
    ClipRange best{lo, hi};
    double bestErr = std::numeric_limits<double>::infinity();
    for (int k = 100; k >= 20; --k) {
        const ClipRange r{lo * k / 100.0, hi * k / 100.0};
        const auto [step, zp] = stepForRange(r, plan);
        const float scale = operatorScaleFromStep(step, plan.convention);
        double err = 0.0;
        for (float v : values) {
            const float back = dequantizeValue(quantizeValue(v, scale, zp, plan), scale, zp, plan);
            err += (static_cast<double>(v) - back) * (static_cast<double>(v) - back);
        }
        if (err < bestErr) {
            bestErr = err;
            best = r;
        }
    }
    return best;
}

ClipRange entropyRange(std::span<const float> values, const QuantPlan& plan) {
    constexpr int kBins = 2048;
    double amax = 0.0;
    for (float v : values) amax = std::max(amax, static_cast<double>(std::fabs(v)));
    if (amax == 0.0) return {0.0, 0.0};
    std::vector<double> hist(kBins, 0.0);
    const double width = amax / kBins;
    for (float v : values) hist[std::min(kBins - 1, static_cast<int>(std::fabs(v) / width))] += 1.0;

    const int levels = isFloatTarget(plan.codeTarget) ? 128 : static_cast<int>(plan.qmax()) + 1;
    int bestI = kBins;
    double bestKl = std::numeric_limits<double>::infinity();
    std::vector<double> p, q;
    for (int i = levels; i <= kBins; ++i) {
        p.assign(hist.begin(), hist.begin() + i);
        for (int j = i; j < kBins; ++j) p[i - 1] += hist[j]; // outliers fold into the last bin
        q.assign(i, 0.0);
        for (int l = 0; l < levels; ++l) { // merge into `levels` bins, spread back over non-empty ones
            const int b = l * i / levels, e = (l + 1) * i / levels;
            double sum = 0.0;
            int nonEmpty = 0;
            for (int j = b; j < e; ++j) {
                sum += hist[j];
                nonEmpty += hist[j] > 0;
            }
            for (int j = b; j < e; ++j)
                if (hist[j] > 0) q[j] = sum / nonEmpty;
        }
        double ps = 0.0, qs = 0.0;
        for (int j = 0; j < i; ++j) {
            ps += p[j];
            qs += q[j];
        }
        double kl = 0.0;
        for (int j = 0; j < i; ++j) {
            if (p[j] <= 0) continue;
            const double pj = p[j] / ps, qj = q[j] > 0 ? q[j] / qs : 1e-12;
            kl += pj * std::log(pj / qj);
        }
        if (kl < bestKl) {
            bestKl = kl;
            bestI = i;
        }
    }
    const double threshold = std::min(amax, (bestI + 0.5) * width);
    return {-threshold, threshold};
}

} // namespace ql
