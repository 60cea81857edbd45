#include "analysis/analyzer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "quant/reference.h"
#include "tensor/error.h"

namespace ql {
namespace {

// Codes whose reconstruction spans the range: qmin/qmax, or ±max finite for floating targets.
std::pair<std::int32_t, std::int32_t> extremeCodes(const QuantPlan& plan) {
    if (!isFloatTarget(plan.codeTarget))
        return {static_cast<std::int32_t>(plan.qmin()), static_cast<std::int32_t>(plan.qmax())};
    const MiniFloat fmt = miniFloatOf(plan.codeTarget);
    const std::int32_t pos = encodeMiniFloat(maxFinite(fmt), fmt, Overflow::Saturate);
    const std::int32_t sign = fmt == MiniFloat::E2M1 ? 0x8 : 0x80;
    return {pos | sign, pos};
}

double roundingSlack(const QuantPlan& plan, double step) {
    if (isFloatTarget(plan.codeTarget)) return 0.0;
    const Rounding r = plan.convention.rounding;
    const bool nearest = r == Rounding::HalfToEven || r == Rounding::HalfAwayFromZero;
    return nearest ? step / 2 : step;
}

// Every reconstruction value of one group, ascending (only for targets with at most 256 codes).
std::vector<double> gridOf(const QuantPlan& plan, const QuantParams& params, std::int64_t g) {
    std::vector<double> grid;
    if (plan.codeTarget == Target::Int32) return grid;
    const float s = params.scales[static_cast<std::size_t>(g)];
    const float zp = params.zeroPointOf(g);
    std::int64_t lo = plan.qmin(), hi = plan.qmax();
    if (isFloatTarget(plan.codeTarget)) {
        lo = 0;
        hi = plan.codeTarget == Target::Fp4E2M1 ? 15 : 255;
    }
    for (std::int64_t c = lo; c <= hi; ++c) {
        const float v = dequantizeValue(static_cast<std::int32_t>(c), s, zp, plan);
        if (std::isfinite(v)) grid.push_back(v);
    }
    std::sort(grid.begin(), grid.end());
    grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
    return grid;
}

struct Ranges {
    double xMin = std::numeric_limits<double>::infinity();
    double xMax = -std::numeric_limits<double>::infinity();
    double minNonZeroAbsErr = std::numeric_limits<double>::infinity();
};

// Runs fn(part, begin, end) over `parts` contiguous slices of [0, n) on their own threads.
template <typename Fn>
void forSlices(std::int64_t n, int parts, Fn&& fn) {
    std::vector<std::thread> threads;
    for (int p = 1; p < parts; ++p) threads.emplace_back(fn, p, n * p / parts, n * (p + 1) / parts);
    fn(0, std::int64_t{0}, n / parts);
    for (auto& t : threads) t.join();
}

// Slices of at least 64K elements, one per hardware thread: small tensors stay on one thread
// (and so give exactly the sums of a sequential pass).
int slicesFor(std::int64_t n) {
    constexpr std::int64_t kMinSlice = 1 << 16;
    const auto hw = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    return static_cast<int>(std::clamp<std::int64_t>(n / kMinSlice, 1, hw));
}

Histogram scaleHistogram(const QuantParams& params, int bins) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (float s : params.scales)
        if (std::isfinite(s)) lo = std::min<double>(lo, s), hi = std::max<double>(hi, s);
    if (lo > hi) lo = hi = 0; // no finite scale (MX NaN blocks): the NaNs are still counted
    Histogram h(lo, hi, bins);
    for (float s : params.scales) h.add(s);
    return h;
}

} // namespace

std::vector<ClipEdges> clipEdges(const QuantPlan& plan, const QuantParams& params) {
    const auto [cLow, cHigh] = extremeCodes(plan);
    const double codeSpan = isFloatTarget(plan.codeTarget) ? 1.0 : static_cast<double>(plan.qmax() - plan.qmin());
    std::vector<ClipEdges> edges(params.scales.size());
    for (std::size_t g = 0; g < edges.size(); ++g) {
        const auto gi = static_cast<std::int64_t>(g);
        const double a = dequantizeValue(cLow, params.scales[g], params.zeroPointOf(gi), plan);
        const double b = dequantizeValue(cHigh, params.scales[g], params.zeroPointOf(gi), plan);
        // A negative scale (aclnnQuantize allows one) swaps the ends.
        edges[g].low = std::min(a, b);
        edges[g].high = std::max(a, b);
        edges[g].roundingSlack = roundingSlack(plan, (edges[g].high - edges[g].low) / codeSpan);
    }
    return edges;
}

TensorAnalysis analyze(const QuantPlan& plan, const QuantParams& params, const Codes& codes,
                       std::span<const float> x, const AnalysisOptions& opt) {
    const std::int64_t n = elementCount(plan.shape);
    if (static_cast<std::int64_t>(x.size()) != n || codes.size() != n)
        throw QuantError("analysis: " + std::to_string(x.size()) + " values and " + std::to_string(codes.size()) +
                         " codes for a tensor of " + std::to_string(n) + " elements");
    if (static_cast<std::int64_t>(params.scales.size()) != plan.scaleCount)
        throw QuantError("analysis: " + std::to_string(params.scales.size()) + " scales for " +
                         std::to_string(plan.scaleCount) + " groups");
    TensorAnalysis a;
    a.codes = CodeStats(plan.codeTarget);
    a.clipping = ClippingStats(clipEdges(plan, params), isFloatTarget(plan.codeTarget));
    a.scales = scaleHistogram(params, opt.scaleBins);
    const ScaleIndexer indexer(plan.layout, plan.shape);
    auto xhatOf = [&](std::int64_t i, std::int64_t g) {
        return dequantizeValue(codes.at(i), params.scales[static_cast<std::size_t>(g)], params.zeroPointOf(g), plan);
    };

    // Pass 1, per slice: error sums, codes used, clipping and the ranges pass 2 needs.
    const int slices = slicesFor(n);
    struct alignas(64) Pass1 { // own cache lines: slices write these per element
        ErrorStats stats;
        CodeStats codes;
        ClippingStats clipping;
        Ranges r;
    };
    std::vector<Pass1> part(static_cast<std::size_t>(slices), Pass1{{}, a.codes, a.clipping, {}});
    forSlices(n, slices, [&](int s, std::int64_t begin, std::int64_t end) {
        Pass1& p = part[static_cast<std::size_t>(s)];
        indexer.forEachIn(begin, end, [&](std::int64_t i, std::int64_t g) {
            const float xi = x[static_cast<std::size_t>(i)];
            const float xh = xhatOf(i, g);
            p.stats.addElement(xi, xh, i);
            p.codes.add(codes.at(i));
            if (!std::isfinite(xi) || !std::isfinite(xh)) return;
            p.clipping.add(g, xi, xh);
            p.r.xMin = std::min<double>(p.r.xMin, xi);
            p.r.xMax = std::max<double>(p.r.xMax, xi);
            const double ae = std::fabs(static_cast<double>(xi) - xh);
            if (ae > 0) p.r.minNonZeroAbsErr = std::min(p.r.minNonZeroAbsErr, ae);
        });
    });
    Ranges r;
    for (const Pass1& p : part) { // merged in slice order: the result does not depend on timing
        a.stats.merge(p.stats);
        a.codes.merge(p.codes);
        a.clipping.merge(p.clipping);
        r.xMin = std::min(r.xMin, p.r.xMin);
        r.xMax = std::max(r.xMax, p.r.xMax);
        r.minNonZeroAbsErr = std::min(r.minNonZeroAbsErr, p.r.minNonZeroAbsErr);
    }

    const bool any = a.stats.finiteCount() > 0;
    const double maxErr = any ? a.stats.maxAbsError() : 0.0;
    a.error = Histogram(-maxErr, maxErr, opt.errorBins);
    a.absErrorLog = Histogram(std::isfinite(r.minNonZeroAbsErr) ? r.minNonZeroAbsErr : 1.0,
                              maxErr > 0 ? maxErr : 1.0, opt.absErrorBins, Histogram::Scale::Log10);
    a.values = Histogram(any ? r.xMin : 0.0, any ? r.xMax : 0.0, opt.valueBins);
    // Pass 2, per slice: the histograms, whose edges pass 1 fixed.
    struct alignas(64) Pass2 {
        Histogram error, absErrorLog, values;
    };
    std::vector<Pass2> hist(static_cast<std::size_t>(slices), Pass2{a.error, a.absErrorLog, a.values});
    forSlices(n, slices, [&](int s, std::int64_t begin, std::int64_t end) {
        Pass2& h = hist[static_cast<std::size_t>(s)];
        indexer.forEachIn(begin, end, [&](std::int64_t i, std::int64_t g) {
            const float xi = x[static_cast<std::size_t>(i)];
            const float xh = xhatOf(i, g);
            if (!std::isfinite(xi) || !std::isfinite(xh)) return;
            const double e = static_cast<double>(xi) - xh;
            h.error.add(e);
            h.absErrorLog.add(std::fabs(e));
            h.values.add(xi);
        });
    });
    for (const Pass2& h : hist) {
        a.error.merge(h.error);
        a.absErrorLog.merge(h.absErrorLog);
        a.values.merge(h.values);
    }

    const auto& edges = a.clipping.edges();
    for (std::size_t g = 1; g < edges.size(); ++g)
        if (edges[g].high - edges[g].low > edges[a.gridGroup].high - edges[a.gridGroup].low)
            a.gridGroup = static_cast<std::int64_t>(g);
    if (!edges.empty()) {
        a.gridEdges = edges[static_cast<std::size_t>(a.gridGroup)];
        a.grid = gridOf(plan, params, a.gridGroup);
    }
    return a;
}

} // namespace ql
