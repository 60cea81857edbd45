#include "analysis/accumulators.h"

#include "analysis/analyzer_steps.h"
#include "quant/layout.h"
#include "quant/reference.h"

#include <vector>

namespace ql {

namespace {

// The oracle's weighted error sums: x̂ of the whole tensor through the reference, then weightedError.
WeightedError weightedReference(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                std::span<const float> x, const ImportanceWeights& s) {
    const std::vector<float> xhat = dequantizeReference(plan, params, codes);
    WeightedError w = weightedError(x, xhat, s.sqMean, s.channels, s.matrices, s.inner);
    w.importance = s.origin;
    return w;
}

} // namespace

TensorAccumulators accumulate(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                              const ValuesView& x, const StatisticsRequest& request,
                              const std::function<void(double done)>& progress) {
    AnalysisOptions options = request.options;
    options.progress = progress;
    TensorAccumulators a;
    if (request.importance) { // in the same pass as the rest
        WeightedError w;
        a.analysis = analyze(plan, params, codes, x, options, *request.importance, w);
        a.weighted = std::move(w);
    } else {
        a.analysis = analyze(plan, params, codes, x, options);
    }
    return a;
}

WeightedError accumulateWeighted(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                 const ValuesView& x, const ImportanceWeights& importance) {
    // x̂ made element by element as the reference does, a block of x and x̂ at a time (WeightedRuns).
    detail::checkSizes(plan, params, codes, x.count);
    checkImportanceFits(importance, x.count);
    constexpr int kBlock = 4096;
    std::vector<float> xs(kBlock), xh(kBlock);
    WeightedRuns runs(importance, x.count);
    std::int64_t first = 0;
    int staged = 0;
    ScaleIndexer(plan.layout, plan.shape).forEach([&](std::int64_t i, std::int64_t g) {
        xs[static_cast<std::size_t>(staged)] = x.at(i);
        xh[static_cast<std::size_t>(staged)] = dequantizeValue(
            codes.at(i), params.scales[static_cast<std::size_t>(g)], params.zeroPointOf(g), plan);
        if (++staged == kBlock) {
            runs.add(xs.data(), xh.data(), staged, first, false);
            first += staged;
            staged = 0;
        }
    });
    if (staged) runs.add(xs.data(), xh.data(), staged, first, false);
    WeightedError w = runs.sums;
    w.importance = importance.origin;
    return w;
}

TensorAccumulators accumulateReference(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, std::span<const float> x,
                                       const StatisticsRequest& request) {
    AnalysisOptions options = request.options;
    options.progress = {};
    TensorAccumulators a;
    a.analysis = analyzeReference(plan, params, codes, x, options);
    if (request.importance) a.weighted = weightedReference(plan, params, codes, x, *request.importance);
    return a;
}

} // namespace ql
