#pragma once
// The host's side of the statistics passes (cuda_statistics.h): what goes into them besides the
// tensors, and how their counts and per-block sums become the report's TensorAnalysis. Host code
// only, no CUDA header: the backend and tst_cuda_statistics (which runs the passes' bodies on the
// host) share it, so the test checks the very merge the backend runs.
#include "analysis/analyzer_steps.h"
#include "base/workers.h"
#include "cuda/cuda_statistics.h"
#include "quant/reference.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace ql::cuda {

/// The code a stored byte is (Codes::at's rule for one-byte targets).
inline std::int32_t codeOfByte(Target target, int byte) {
    Codes one(target, 1);
    one.data()[0] = static_cast<std::uint8_t>(byte);
    return one.at(0);
}

/// Both passes' arguments but the bins (placeBins() adds them after pass one): `walk` holds the
/// map, scales and zero points where the passes read them, `codes` one byte per element.
inline StatisticsArgs statisticsArgs(const QuantizeArgs& walk, const std::uint8_t* codes,
                                     const ResolvedSpec& plan, std::size_t rows) {
    StatisticsArgs a{};
    a.walk = walk;
    a.codes = codes;
    a.floatTarget = isFloatTarget(plan.codeTarget);
    for (int b = 0; b < 256; ++b) // codeValue before the zero point (minifloats have none)
        a.codeValues[b] = codeValue(codeOfByte(plan.codeTarget, b), 0.0f, plan);
    a.clip = ClipEdgeRule(plan);
    a.rows = static_cast<std::int64_t>(rows);
    return a;
}

/// Pass one's results into `a` (begun by detail::beginAnalysis, its kept clipping rows already
/// filled): the blocks' sums merged in block order, the code counts.
inline void finishFirstPass(TensorAnalysis& a, Target target, const std::vector<BlockSums>& blocks,
                            const std::vector<std::int64_t>& codeCounts) {
    BlockSums sums = emptyBlockSums();
    for (const BlockSums& b : blocks)
        mergeBlockSums(sums, b);
    a.stats = ErrorStats::fromSums(sums.errors);
    a.clipping.setTotal(sums.total);
    for (int b = 0; b < 256; ++b)
        if (const std::int64_t n = codeCounts[static_cast<std::size_t>(b)])
            a.codes.add(codeOfByte(target, b), n);
}

/// The counters of pass two for the histograms openHistograms() opened.
inline HistogramSlots slotsOf(const TensorAnalysis& a) {
    return {a.error.binCount(), a.absErrorLog.binCount(), a.values.binCount()};
}

/// Pass two's bins into `args`; `logEdges` is where the pass reads the |error| histogram's edges
/// (a.absErrorLog.edges(), copied to the device there).
inline void placeBins(StatisticsArgs& args, const TensorAnalysis& a, const double* logEdges) {
    args.error = a.error.placement();
    args.absError = a.absErrorLog.placement();
    args.values = a.values.placement();
    args.error.rule.edgeV = nullptr; // linear bins never read their edges
    args.values.rule.edgeV = nullptr;
    args.absError.rule.edgeV = logEdges;
}

/// Pass two's counts into the histograms.
inline void finishSecondPass(TensorAnalysis& a, const std::vector<std::int64_t>& slotCounts) {
    const HistogramSlots counters = slotsOf(a);
    auto add = [&](Histogram& h, int start) {
        const std::int64_t* at = slotCounts.data() + start;
        const int bins = h.binCount();
        h.addCounts({at, static_cast<std::size_t>(bins)}, at[bins], at[bins + 1], at[bins + 2]);
    };
    add(a.error, counters.errorAt());
    add(a.absErrorLog, counters.absErrorAt());
    add(a.values, counters.valuesAt());
}

/// The group shown with the value histogram: the widest clip range (WidestGroup's rule), over the
/// host's threads when there are many groups (NVFP4 has one per 16 elements).
inline std::int64_t widestGroup(const ResolvedSpec& plan, const QuantParams& params) {
    if (params.scales.empty()) return 0;
    const ClipEdgeRule rule(plan);
    const auto groups = static_cast<std::int64_t>(params.scales.size());
    const unsigned threads = groups < 65536 ? 1u : std::max(1u, std::thread::hardware_concurrency());
    std::vector<WidestGroup> parts(threads);
    runOnWorkers(threads, [&](unsigned w) {
        for (std::int64_t g = groups * w / threads; g < groups * (w + 1) / threads; ++g)
            parts[w].add(g, rule.of(params, g));
    });
    WidestGroup widest;
    for (const WidestGroup& p : parts)
        widest.merge(p);
    return widest.result(rule.of(params, 0));
}

} // namespace ql::cuda
