#pragma once
// Calibrations that need only each group's finite range [min(0, x), max(0, x)], and calibrate's
// last step for them, group by group: range -> step -> operator scale (and zero point). Backends
// that measure ranges with their own kernels (the cpu backend's range pass, the cuda backend's
// range kernel) turn them into parameters here, so every backend gives calibrate's answer.
#include "quant/calibration.h"
#include "quant/calibration_search.h"
#include "quant/plan.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ql {

/// True when `plan`'s calibration is a function of each group's finite range alone: absmax (for
/// symmetric plans or per-group zero points) and asymmetric minmax with per-group zero points.
/// MX / NVFP4 block scales, percentile, MSE and entropy are not.
inline bool rangeCalibrated(const QuantPlan& plan) {
    const CalibMethod m = plan.spec.calibration.method;
    if (isBlockFormat(plan.spec.preset)) return false;
    if (m == CalibMethod::AbsMax) return plan.spec.symmetric || !plan.scalarZeroPoint;
    return m == CalibMethod::MinMax && !plan.spec.symmetric && !plan.scalarZeroPoint;
}

/// range -> parameters for one group. The symmetric divide / reciprocal case is stepForRange +
/// operatorScaleFromStep inlined (the same double operations, with the plan's constants looked up
/// once), since per-group jobs do this once per 128 elements.
class RangeRule {
public:
    explicit RangeRule(const QuantPlan& plan)
        : m_plan(plan)
        , m_inline(plan.spec.symmetric && (plan.convention.scaleOp == ScaleOp::Divide ||
                                           plan.convention.scaleOp == ScaleOp::MultiplyReciprocal))
        , m_top(isFloatTarget(plan.codeTarget) ? static_cast<double>(maxFinite(miniFloatOf(plan.codeTarget)))
                                               : static_cast<double>(plan.qmax())) {}

    /// Writes group g's scale (and zero point when asymmetric) into `p`, sized by the caller.
    void apply(float lo, float hi, std::int64_t g, QuantParams& p) const {
        if (m_inline) {
            const double amax =
                std::max(std::fabs(static_cast<double>(lo)), std::fabs(static_cast<double>(hi)));
            p.scales[static_cast<std::size_t>(g)] =
                static_cast<float>(amax > 0 ? normalStep(amax / m_top) : 1.0);
            return;
        }
        const auto [step, zp] = stepForRange(ClipRange(lo, hi), m_plan);
        p.scales[static_cast<std::size_t>(g)] = operatorScaleFromStep(step, m_plan.convention);
        if (!m_plan.spec.symmetric) p.zeroPoints[static_cast<std::size_t>(g)] = zp;
    }

    /// Parameters sized for every group of the plan (scales 1, zero points 0), ready for apply().
    QuantParams emptyParams() const {
        QuantParams p;
        p.scales.assign(static_cast<std::size_t>(m_plan.scaleCount), 1.0f);
        if (!m_plan.spec.symmetric) p.zeroPoints.assign(static_cast<std::size_t>(m_plan.scaleCount), 0.0f);
        return p;
    }

private:
    const QuantPlan& m_plan;
    bool m_inline;
    double m_top;
};

} // namespace ql
