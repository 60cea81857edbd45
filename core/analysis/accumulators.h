#pragma once
// The report's mergeable accumulators: what a backend fills beside its codes,
// and the one host accumulate() that fills them from a tensor and its codes. A backend asked for
// statistics (BackendTask::statistics) returns them in Result::statistics; core formats them into the
// report and never measures the codes again.
#include "analysis/analyzer.h"
#include "analysis/weighted_error.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "tensor/values_view.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace ql {

/// What a job asks its backend to measure beside the codes.
struct StatisticsRequest {
    /// Bins, the clipping rows kept, threads. Its progress is left empty: the backend reports its own.
    AnalysisOptions options;
    /// With it, the importance-weighted error sums too.
    std::optional<ImportanceWeights> importance;
    /// Off when the job needs the statistics alone (nothing is exported or compared): the result's
    /// codes may then come back empty, so a backend can make each part's codes in memory it reuses.
    bool keepCodes = true;
};

/// Value, error, |error|, code and scale histograms; error sums with NaN/Inf counts and the worst
/// element; code counts; per-group clipping and SQNR sums; with importance, the weighted error sums.
/// Each part merges by adding (histograms with equal edges), so shards of a tensor combine exactly.
struct TensorAccumulators {
    TensorAnalysis analysis;
    std::optional<WeightedError> weighted;
};

/// The host accumulate(): fills the accumulators for `codes` (made by `plan` with `params`) against the
/// original values `x` in one vector pass (analyze), with the weighted sums of an importance request.
/// `progress` (may be empty) gets the fraction done and may throw to stop. A backend whose device
/// hands back codes only fills its Result with this.
TensorAccumulators accumulate(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                              const ValuesView& x, const StatisticsRequest& request,
                              const std::function<void(double done)>& progress = {});

/// The importance-weighted error sums alone (accumulate()'s with an importance request), for a
/// backend whose own pass makes the rest: one read of x and the codes, a block at a time.
WeightedError accumulateWeighted(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                 const ValuesView& x, const ImportanceWeights& importance);

/// The oracle's accumulators: one element at a time through the scalar reference (analyzeReference,
/// dequantizeReference). cpu-reference fills its Result with it; the conformance test compares every
/// backend's with these.
TensorAccumulators accumulateReference(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, std::span<const float> x,
                                       const StatisticsRequest& request);

} // namespace ql
