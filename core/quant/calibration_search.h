#pragma once
// Clip-range searches over one scale group's values: percentile, MSE-optimal and entropy (KL).
#include <algorithm>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "quant/plan.h"

namespace ql {

/// A clip range [lo, hi] (lo <= 0 <= hi for asymmetric; lo = -hi for symmetric).
using ClipRange = std::pair<double, double>;

ClipRange percentileRange(std::vector<float>& values, double percentile, bool symmetric);
/// Tries clip ratios 1.00, 0.99, ... 0.20 of the full range; picks the one with the least
/// squared error after quantize + dequantize in the plan's own convention.
ClipRange mseRange(std::span<const float> values, const QuantPlan& plan);
/// TensorRT's legacy entropy calibration: 2048-bin |x| histogram, KL(P||Q) over candidate thresholds.
ClipRange entropyRange(std::span<const float> values, const QuantPlan& plan);

/// A step below the smallest normal float would round to a zero (or subnormal) scale, which no
/// operator accepts: ranges made of subnormals get the smallest normal step instead.
inline double normalStep(double step) {
    return std::max(step, static_cast<double>(std::numeric_limits<float>::min()));
}

/// The step and zero point for a clip range under the plan's target.
struct StepAndZero {
    double step;
    float zeroPoint;
};
StepAndZero stepForRange(ClipRange range, const QuantPlan& plan);

} // namespace ql
