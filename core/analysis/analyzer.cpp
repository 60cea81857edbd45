#include "analysis/analyzer.h"

#include "analysis/accumulators.h"
#include "analysis/analyzer_isa.h"
#include "analysis/analyzer_steps.h"
#include "analysis/histogram_filler.h"
#include "base/cpu_isa.h"
#include "base/error.h"
#include "quant/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace ql {
namespace {

// Codes whose reconstruction spans the range: qmin/qmax, or ±max finite for floating targets.
std::pair<std::int32_t, std::int32_t> extremeCodes(const ResolvedSpec& plan) {
    if (!isFloatTarget(plan.codeTarget))
        return {static_cast<std::int32_t>(plan.qmin()), static_cast<std::int32_t>(plan.qmax())};
    const MiniFloat fmt = miniFloatOf(plan.codeTarget);
    const std::int32_t pos = encodeMiniFloat(maxFinite(fmt), fmt, Overflow::Saturate);
    const std::int32_t sign = fmt == MiniFloat::E2M1 ? 0x8 : 0x80;
    return {pos | sign, pos};
}

// The |error| histogram's bins in each octave below the largest rounding error.
constexpr int kAbsErrorPerOctave = 4;

// The smallest e with 2^e >= v (v > 0 and finite), within double's normal exponents.
int exponentAtLeast(double v) {
    int e = std::ilogb(v);
    if (std::ldexp(1.0, e) < v) ++e;
    return std::clamp(e, std::numeric_limits<double>::min_exponent - 1,
                      std::numeric_limits<double>::max_exponent - 1);
}

double roundingSlack(const ResolvedSpec& plan, double step) {
    if (isFloatTarget(plan.codeTarget)) return 0.0;
    const Rounding r = plan.convention.rounding;
    const bool nearest = r == Rounding::HalfToEven || r == Rounding::HalfAwayFromZero;
    return nearest ? step / 2 : step;
}

// Every reconstruction value of one group, ascending (only for targets with at most 256 codes).
std::vector<double> gridOf(const ResolvedSpec& plan, const QuantParams& params, std::int64_t g) {
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

Histogram scaleHistogram(const QuantParams& params, int bins) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (float s : params.scales)
        if (std::isfinite(s)) lo = std::min<double>(lo, s), hi = std::max<double>(hi, s);
    if (lo > hi) lo = hi = 0; // no finite scale (MX NaN blocks): the NaNs are still counted
    Histogram h(lo, hi, bins);
    { // one scale per NVFP4 block, a million of them; the filler adds its counts as it goes out of scope
        HistogramFiller filler(h);
        const std::vector<float>& s = params.scales;
        for (std::size_t first = 0; first < s.size(); first += HistogramFiller::kBlock) {
            const int n = static_cast<int>(std::min<std::size_t>(HistogramFiller::kBlock, s.size() - first));
            filler.addBlock<4>(s.data() + first, n, [&](int k) {
                return static_cast<double>(s[first + static_cast<std::size_t>(k)]);
            });
        }
    }
    return h;
}

} // namespace

ClipEdgeRule::ClipEdgeRule(const ResolvedSpec& plan)
    : m_float(isFloatTarget(plan.codeTarget))
    , m_op(plan.convention.scaleOp)
    , m_codeSpan(m_float ? 1.0 : static_cast<double>(plan.qmax() - plan.qmin()))
    , m_slackSteps(roundingSlack(plan, 1.0)) {
    const auto [low, high] = extremeCodes(plan);
    m_low = m_float ? codeValue(low, 0.0f, plan) : static_cast<float>(low);
    m_high = m_float ? codeValue(high, 0.0f, plan) : static_cast<float>(high);
}

namespace detail {

void checkSizes(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes, std::int64_t n,
                bool codesInParts) {
    const std::int64_t want = elementCount(plan.shape);
    if (n != want || (codes.size() != want && !(codesInParts && codes.size() == 0)))
        throw QuantError("analysis: " + std::to_string(n) + " values and " + std::to_string(codes.size()) +
                         " codes for a tensor of " + std::to_string(want) + " elements");
    if (static_cast<std::int64_t>(params.scales.size()) != plan.scaleCount)
        throw QuantError("analysis: " + std::to_string(params.scales.size()) + " scales for " +
                         std::to_string(plan.scaleCount) + " groups");
}

TensorAnalysis beginAnalysis(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                             std::int64_t n, std::size_t groupRows, bool codesInParts) {
    checkSizes(plan, params, codes, n, codesInParts);
    TensorAnalysis a;
    a.codes = CodeStats(plan.codeTarget);
    a.clipping = ClippingStats(std::min(groupRows, params.scales.size()), params.scales.size(),
                               isFloatTarget(plan.codeTarget));
    return a;
}

void openHistograms(TensorAnalysis& a, const ResolvedSpec& plan, const QuantParams& params,
                    const AnalysisOptions& opt) {
    // Each group's reach: how far beyond the ends of its grid a value still rounds to an end code,
    // which bounds the rounding error of every element not clipped (half the grid's widest gap when
    // rounding to nearest, the whole gap otherwise; a minifloat's widest gap is its top one),
    // widened by 2^-20 of the group's largest magnitude for the float rounding of x / s and of x̂.
    const ClipEdgeRule rule(plan);
    const auto [lowCode, highCode] = extremeCodes(plan);
    double reachPerSpan = 0; // reach / (high − low), the same for every group
    if (isFloatTarget(plan.codeTarget)) {
        const Rounding r = plan.convention.rounding;
        const bool nearest = r == Rounding::HalfToEven || r == Rounding::HalfAwayFromZero;
        const double top = codeValue(highCode, 0.0f, plan), below = codeValue(highCode - 1, 0.0f, plan);
        reachPerSpan = (nearest ? 0.5 : 1.0) * (top - below) / (2 * top);
    } else if (highCode > lowCode) {
        // (In doubles: int32 codes span more than an int holds.)
        reachPerSpan =
            roundingSlack(plan, 1.0) / (static_cast<double>(highCode) - static_cast<double>(lowCode));
    }
    // Four sets of extremes taken in turn, so a tensor of a million groups (NVFP4) is not one chain
    // of dependent min / max (exact: the order cannot change them).
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr int kChains = 4;
    double los[kChains], his[kChains], reaches[kChains];
    std::fill_n(los, kChains, inf);
    std::fill_n(his, kChains, -inf);
    std::fill_n(reaches, kChains, 0.0);
    for (std::int64_t g = 0; g < static_cast<std::int64_t>(params.scales.size()); ++g) {
        const ClipEdges e = rule.of(params, g);
        if (!std::isfinite(e.low) || !std::isfinite(e.high)) continue; // its elements' x̂ are not finite
        const double r =
            (e.high - e.low) * reachPerSpan + std::max(std::fabs(e.low), std::fabs(e.high)) * 0x1p-20;
        const auto c = static_cast<std::size_t>(g % kChains);
        los[c] = std::min(los[c], e.low - r);
        his[c] = std::max(his[c], e.high + r);
        reaches[c] = std::max(reaches[c], r);
    }
    // (+ 0.0: a zero end is +0 whichever chain held it.)
    double lo = *std::min_element(los, los + kChains) + 0.0, hi = *std::max_element(his, his + kChains) + 0.0,
           reach = *std::max_element(reaches, reaches + kChains);
    if (lo > hi) lo = hi = 0; // no group with finite edges
    if (!(reach > 0)) reach = 1.0;
    // Error bins of a power-of-two width centred on zero: the narrowest width with which the bins
    // asked for reach `reach` each way, then as few bins of that width (and the count's parity: an
    // odd count centres one on zero) as reach it, so the edges pass it by less than a bin. |error|
    // bins a quarter of an octave wide over the octaves below the power of two that reaches it. Both
    // follow from the bits of an error, with no rounding (report format 3).
    const int asked = std::max(opt.errorBins, 1);
    const int width = exponentAtLeast(2 * reach / asked);
    int errorBins = static_cast<int>(std::ceil(2 * reach / std::ldexp(1.0, width)));
    if ((asked - errorBins) % 2 != 0) ++errorBins;
    errorBins = std::clamp(errorBins, 1, asked);
    a.error = Histogram::alignedLinear(-errorBins, width, errorBins);
    const int perOctave = std::clamp(opt.absErrorBins, 1, kAbsErrorPerOctave);
    const int octaves = std::max(opt.absErrorBins / perOctave, 1);
    const int top = exponentAtLeast(reach);
    a.absErrorLog = Histogram::octaves(std::max(top - octaves, std::numeric_limits<double>::min_exponent - 1),
                                       octaves, perOctave);
    a.values = Histogram(lo, hi, opt.valueBins);
}

void finishAnalysis(TensorAnalysis& a, const ResolvedSpec& plan, const QuantParams& params,
                    std::int64_t gridGroup, const AnalysisOptions& opt) {
    a.scales = scaleHistogram(params, opt.scaleBins);
    if (params.scales.empty()) return;
    a.gridGroup = gridGroup;
    a.gridEdges = ClipEdgeRule(plan).of(params, gridGroup);
    a.grid = gridOf(plan, params, gridGroup);
}

} // namespace detail

} // namespace ql

namespace ql {

AnalysisIsa analysisIsa(AnalysisIsa wanted) {
#ifdef QL_ANALYZER_X86
    static const AnalysisIsa widest = [] {
        switch (widestCpuIsa()) { // the CPU kernels' choice, QUANTLENS_CPU_ISA's cap included
        case CpuIsa::Avx512:
            return AnalysisIsa::Avx512;
        case CpuIsa::Avx2:
            return AnalysisIsa::Avx2;
        case CpuIsa::Baseline:
            break;
        }
        return AnalysisIsa::Baseline;
    }();
    if (wanted == AnalysisIsa::Best) return widest;
    return static_cast<int>(wanted) >= static_cast<int>(widest) ? wanted : widest;
#else
    (void)wanted;
    return AnalysisIsa::Baseline;
#endif
}

namespace {

// Below this many elements the oracle's single pass is as fast.
bool oracleMeasures(const ResolvedSpec& plan, std::int64_t n) {
    constexpr std::int64_t kSmall = 1 << 12;
    return n < kSmall || plan.shape.empty();
}

} // namespace

namespace {

// The fast pass of the ISA the options pick.
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt,
                           const ImportanceWeights* importance, std::optional<WeightedError>& weighted) {
    switch (analysisIsa(opt.isa)) {
#ifdef QL_ANALYZER_X86
    case AnalysisIsa::Avx512:
        return detail::avx512::analyzeFast(plan, params, codes, x, opt, importance, weighted);
    case AnalysisIsa::Avx2:
        return detail::avx2::analyzeFast(plan, params, codes, x, opt, importance, weighted);
#endif
    default:
        return detail::baseline::analyzeFast(plan, params, codes, x, opt, importance, weighted);
    }
}

} // namespace

TensorAnalysis analyze(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                       const ValuesView& x, const AnalysisOptions& opt) {
    const std::int64_t n = x.count;
    if (oracleMeasures(plan, n)) {
        std::vector<float> values(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
        for (std::int64_t i = 0; i < n; ++i)
            values[static_cast<std::size_t>(i)] = x.at(i);
        return analyzeReference(plan, params, codes, values, opt);
    }
    std::optional<WeightedError> none;
    return analyzeFast(plan, params, codes, x, opt, nullptr, none);
}

TensorAnalysis analyze(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                       const ValuesView& x, const AnalysisOptions& opt, const ImportanceWeights& importance,
                       WeightedError& weighted) {
    checkImportanceFits(importance, x.count);
    if (oracleMeasures(plan, x.count)) { // the small tensor's sums in one run, as SlicedAnalysis makes them
        SlicedAnalysis one(plan, params, codes, x, opt, {0}, 1);
        one.weigh(importance);
        TensorAnalysis a = one.finish();
        weighted = *one.weighted();
        return a;
    }
    std::optional<WeightedError> sums;
    TensorAnalysis a = analyzeFast(plan, params, codes, x, opt, &importance, sums);
    weighted = sums.value_or(WeightedError{});
    weighted.importance = importance.origin;
    return a;
}

SlicedAnalysis::SlicedAnalysis(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                               const ValuesView& x, const AnalysisOptions& options,
                               const std::vector<std::int64_t>& sliceStarts, unsigned workers)
    : m_plan(plan)
    , m_params(params)
    , m_codes(codes)
    , m_x(x)
    , m_options(options) {
    if (oracleMeasures(plan, x.count)) {
        detail::checkSizes(plan, params, codes, x.count);
        return;
    }
    switch (analysisIsa(options.isa)) {
#ifdef QL_ANALYZER_X86
    case AnalysisIsa::Avx512:
        m_pass = detail::avx512::slicedPass(plan, params, codes, x, options, sliceStarts, workers);
        break;
    case AnalysisIsa::Avx2:
        m_pass = detail::avx2::slicedPass(plan, params, codes, x, options, sliceStarts, workers);
        break;
#endif
    default:
        m_pass = detail::baseline::slicedPass(plan, params, codes, x, options, sliceStarts, workers);
    }
}

SlicedAnalysis::~SlicedAnalysis() = default;

void SlicedAnalysis::weigh(const ImportanceWeights& importance) {
    checkImportanceFits(importance, m_x.count);
    m_importance = importance;
    if (m_pass) m_pass->weigh(importance);
}

void SlicedAnalysis::addPart(std::int64_t slice, std::int64_t from, std::int64_t to, unsigned worker,
                             const Codes* partCodes) {
    if (m_pass) m_pass->addPart(slice, from, to, worker, partCodes);
}

bool SlicedAnalysis::measuresInParts(const ResolvedSpec& plan, std::int64_t n) {
    return !oracleMeasures(plan, n);
}

TensorAnalysis SlicedAnalysis::finish() {
    if (m_pass) {
        TensorAnalysis a = m_pass->finish(m_weighted);
        if (m_weighted) m_weighted->importance = m_importance->origin;
        return a;
    }
    if (m_importance) // a small tensor: its sums in one read, as a backend without its own pass makes them
        m_weighted = accumulateWeighted(m_plan, m_params, m_codes, m_x, *m_importance);
    return analyze(m_plan, m_params, m_codes, m_x, m_options);
}

TensorAnalysis analyze(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                       std::span<const float> x, const AnalysisOptions& opt) {
    return analyze(plan, params, codes, ValuesView::of(x), opt);
}

} // namespace ql
