#include "analysis/accumulators.h"

#include "quant/reference.h"

#include <vector>

namespace ql {

namespace {

// The weighted error sums of the codes against x, x̂ made element by element as the reference does.
WeightedError weightedOf(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
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
    a.analysis = analyze(plan, params, codes, x, options);
    if (request.importance) a.weighted = accumulateWeighted(plan, params, codes, x, *request.importance);
    return a;
}

WeightedError accumulateWeighted(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                 const ValuesView& x, const ImportanceWeights& importance) {
    // f32 in place; a 16-bit input is widened once for the weighted sums alone.
    std::vector<float> widened;
    std::span<const float> floats;
    if (x.dtype == DType::F32 && reinterpret_cast<std::uintptr_t>(x.data) % alignof(float) == 0) {
        floats = {reinterpret_cast<const float*>(x.data), static_cast<std::size_t>(x.count)};
    } else {
        widened.resize(static_cast<std::size_t>(x.count));
        for (std::int64_t i = 0; i < x.count; ++i)
            widened[static_cast<std::size_t>(i)] = x.at(i);
        floats = widened;
    }
    return weightedOf(plan, params, codes, floats, importance);
}

TensorAccumulators accumulateReference(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, std::span<const float> x,
                                       const StatisticsRequest& request) {
    AnalysisOptions options = request.options;
    options.progress = {};
    TensorAccumulators a;
    a.analysis = analyzeReference(plan, params, codes, x, options);
    if (request.importance) a.weighted = weightedOf(plan, params, codes, x, *request.importance);
    return a;
}

} // namespace ql
