#pragma once
// The host's step after the range kernel (cuda_range.h): every group's measured range, and for MX
// whether it holds a NaN, become the plan's parameters by RangeRule, the rule the cpu backend's range
// pass uses. Host code only: the backend and tst_cuda_walk share it.
#include "base/workers.h"
#include "quant/range_rule.h"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace ql::cuda {

/// Whether `plan`'s parameters follow from each group's range: absmax and minmax, and the MX and NVFP4
/// block scales of every calibration but MSE.
inline bool rangesGiveParams(const ResolvedSpec& plan) {
    return rangeCalibrated(plan) || blockRangeCalibrated(plan);
}

/// Whether the rule also reads each group's NaN flag (MX: a block holding a NaN gets the NaN scale).
inline bool rangesNeedNanFlags(const ResolvedSpec& plan) {
    return plan.spec.preset == Preset::MX;
}

/// The parameters from every group's finite range [min(0, x), max(0, x)] and, when
/// rangesNeedNanFlags(), its NaN flag (`nan` empty otherwise). NVFP4's tensor scale comes first, from
/// the largest magnitude of all. The groups are split over the host's threads when there are many
/// (int4 blocks of 128 on a large tensor: half a million).
inline QuantParams paramsFromRanges(const ResolvedSpec& plan, const std::vector<float>& lo,
                                    const std::vector<float>& hi, const std::vector<std::int32_t>& nan) {
    const RangeRule rule(plan);
    QuantParams p = rule.emptyParams();
    const std::int64_t groups = plan.scaleCount;
    if (rule.needsTensorAmax()) {
        float amax = 0.0f;
        for (std::size_t g = 0; g < lo.size(); ++g)
            amax = std::max(amax, std::max(-lo[g], hi[g]));
        rule.setTensorAmax(amax, p);
    }
    const unsigned threads = groups < 65536 ? 1u : std::max(1u, std::thread::hardware_concurrency());
    runOnWorkers(threads, [&](unsigned w) {
        for (std::int64_t g = groups * w / threads; g < groups * (w + 1) / threads; ++g) {
            const auto k = static_cast<std::size_t>(g);
            rule.apply(lo[k], hi[k], g, p, !nan.empty() && nan[k] != 0);
        }
    });
    return p;
}

} // namespace ql::cuda
