#pragma once
// A group's clip thresholds (ClipEdges) follow from its scale and zero point alone. The rule holds
// the plan's part, worked out once, so a pass can find a group's edges as it reaches the group
// instead of reading a table with a row per group (an NVFP4 tensor of 16M elements has a million).
#include "analysis/clipping.h"
#include "base/host_device.h"
#include "quant/inverse_scale.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ql {

class ClipEdgeRule {
public:
    ClipEdgeRule() = default; // the identity rule, until one is assigned (kernel arguments)
    explicit ClipEdgeRule(const ResolvedSpec& plan);

    /// Group g's thresholds: the reconstructions of its two extreme codes (dequantizeValue's
    /// arithmetic), and the rounding slack of one step (integer targets).
    [[gnu::always_inline]] ClipEdges of(const QuantParams& params, std::int64_t g) const {
        return edgesFor(params.scales[static_cast<std::size_t>(g)], m_float ? 0.0f : params.zeroPointOf(g));
    }
    /// The same from the group's scale and zero point (the CUDA backend's statistics run it too).
    QL_HOST_DEVICE QL_FORCE_INLINE ClipEdges edgesFor(float scale, float zp) const {
        // codeValue: an integer code less the zero point; a minifloat's value, the same for every group.
        const double a = applyInverseScale(m_float ? m_low : m_low - zp, scale, m_op);
        const double b = applyInverseScale(m_float ? m_high : m_high - zp, scale, m_op);
        ClipEdges e;
        e.low = b < a ? b : a;  // std::min and std::max: a negative scale (aclnnQuantize allows one)
        e.high = a < b ? b : a; // swaps the ends
        // (0 · Inf is not 0: a target without slack has none whatever its step.)
        e.roundingSlack = m_slackSteps == 0.0 ? 0.0 : m_slackSteps * ((e.high - e.low) / m_codeSpan);
        return e;
    }
    bool floatTarget() const { return m_float; }

private:
    float m_low = 0, m_high = 0; // the extreme codes' values before the zero point and the scale
    bool m_float = false;
    ScaleOp m_op = ScaleOp::Divide;
    double m_codeSpan = 1;   // steps between the extreme codes (integer targets)
    double m_slackSteps = 0; // rounding slack in steps: 0, 1/2 or 1, exactly
};

/// The group with the widest clip range (high − low), found over groups met in any order and merged
/// in any order: the widest of the widths that are not NaN, of equal ones the lowest group. A scan in
/// group order keeping the first strictly wider finds the same group, unless group 0's width is NaN
/// (nothing compares wider than NaN): result() takes that case.
struct WidestGroup {
    double width = -std::numeric_limits<double>::infinity();
    std::int64_t group = -1; // none yet

    [[gnu::always_inline]] void add(std::int64_t g, const ClipEdges& e) { take(g, e.high - e.low); }
    void merge(const WidestGroup& o) {
        if (o.group >= 0) take(o.group, o.width);
    }
    /// The group shown with the value histogram, given group 0's edges.
    std::int64_t result(const ClipEdges& first) const {
        return group < 0 || std::isnan(first.high - first.low) ? 0 : group;
    }

private:
    [[gnu::always_inline]] void take(std::int64_t g, double w) {
        if (w > width || (w == width && g < group)) width = w, group = g;
    }
};

} // namespace ql
