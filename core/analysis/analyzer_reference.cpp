#include "analysis/analyzer_steps.h"
#include "quant/reference.h"

#include <algorithm>
#include <cmath>

namespace ql {

EdgeRows clipEdges(const ResolvedSpec& plan, const QuantParams& params, std::size_t count) {
    const ClipEdgeRule rule(plan);
    EdgeRows edges(std::min(count, params.scales.size()));
    for (std::size_t g = 0; g < edges.size(); ++g)
        edges[g] = rule.of(params, static_cast<std::int64_t>(g));
    return edges;
}

TensorAnalysis analyzeReference(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                std::span<const float> x, const AnalysisOptions& opt) {
    TensorAnalysis a = detail::beginAnalysis(plan, params, codes, static_cast<std::int64_t>(x.size()),
                                             ClippingStats::kAllRows);
    const ScaleIndexer indexer(plan.layout, plan.shape);
    const EdgeRows edges = clipEdges(plan, params); // every group's, until the end
    auto xhatOf = [&](std::int64_t i, std::int64_t g) {
        return dequantizeValue(codes.at(i), params.scales[static_cast<std::size_t>(g)], params.zeroPointOf(g),
                               plan);
    };
    detail::openHistograms(a, plan, params, opt);
    indexer.forEach([&](std::int64_t i, std::int64_t g) {
        const float xi = x[static_cast<std::size_t>(i)];
        const float xh = xhatOf(i, g);
        a.stats.addElement(xi, xh, i);
        a.codes.add(codes.at(i));
        if (!std::isfinite(xi) || !std::isfinite(xh)) return;
        a.clipping.add(g, edges[static_cast<std::size_t>(g)], xi, xh);
        const double e = static_cast<double>(xi) - xh;
        a.error.add(e);
        a.absErrorLog.add(std::fabs(e));
        a.values.add(xi);
    });
    // The widest group: in group order, the first strictly wider.
    std::size_t widest = 0;
    for (std::size_t g = 1; g < edges.size(); ++g)
        if (edges[g].high - edges[g].low > edges[widest].high - edges[widest].low) widest = g;
    detail::finishAnalysis(a, plan, params, static_cast<std::int64_t>(widest), opt);
    a.clipping.keepFirstGroups(opt.groupRows);
    return a;
}

} // namespace ql
