#pragma once
// The host's step after the range kernel (cuda_range.h): every group's measured range becomes the
// plan's parameters by RangeRule, the rule the cpu backend's range pass uses. Host code only: the
// backend and tst_cuda_walk share it.
#include "base/workers.h"
#include "quant/range_rule.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace ql::cuda {

/// absmax / minmax parameters from every group's finite range [min(0, x), max(0, x)] (rangeCalibrated
/// plans; MX and NVFP4 block scales stay with the host's calibrator, which runs during the upload and
/// beats bringing back a range per block of 16 or 32 elements). The groups are split over the host's
/// threads when there are many (int4 blocks of 128 on a large tensor: half a million).
inline QuantParams paramsFromRanges(const ResolvedSpec& plan, const std::vector<float>& lo,
                                    const std::vector<float>& hi) {
    const RangeRule rule(plan);
    QuantParams p = rule.emptyParams();
    const std::int64_t groups = plan.scaleCount;
    const unsigned threads = groups < 65536 ? 1u : std::max(1u, std::thread::hardware_concurrency());
    runOnWorkers(threads, [&](unsigned w) {
        for (std::int64_t g = groups * w / threads; g < groups * (w + 1) / threads; ++g)
            rule.apply(lo[static_cast<std::size_t>(g)], hi[static_cast<std::size_t>(g)], g, p);
    });
    return p;
}

} // namespace ql::cuda
