#pragma once
// Everything QuantLens measures about one quantized tensor, computed without a float copy of the
// input: the values are read in place (f32, bf16 or f16), reconstructions are made element by element
// with each group's constants hoisted, over fixed slices on every core, in one pass: the histograms'
// edges follow from the plan and the params, so every element is counted as it is met.
// analyzeReference is the plain sequential oracle it is tested against.
#include "analysis/clipping.h"
#include "analysis/code_stats.h"
#include "analysis/error_stats.h"
#include "analysis/histogram.h"
#include "analysis/weighted_error.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "tensor/values_view.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ql {

namespace detail {
class SlicedPass;
}

/// Which build of the fast pass runs: the widest the CPU has (AVX-512, AVX2 or the baseline on
/// x86-64; QUANTLENS_CPU_ISA=sse2|avx2 caps it), or a narrower one. Every build gives the same
/// bits; tests run each the CPU has.
enum class AnalysisIsa { Best, Avx512, Avx2, Baseline };

/// The build analyze() runs for `wanted`: `wanted` itself when the CPU has it, else the widest it
/// has below it (Best: the widest of all).
AnalysisIsa analysisIsa(AnalysisIsa wanted = AnalysisIsa::Best);

struct AnalysisOptions {
    int errorBins = 101;   // odd: one bin centred on zero error
    int absErrorBins = 60; // octave bins of |x − x̂|, four to an octave
    int valueBins = 256;
    int scaleBins = 64;
    /// Clipping rows kept: those of the first groupRows groups. The others count in the total only (the state
    /// ClippingStats::keepFirstGroups leaves). A whole-model run keeps what its report lists, so
    /// NVFP4's million blocks do not need a row each.
    std::size_t groupRows = ClippingStats::kAllRows;
    unsigned threads = 0;                // 0: every hardware thread; the result never depends on it
    AnalysisIsa isa = AnalysisIsa::Best; // nor on this
    /// Called on the calling thread with the fraction of the pass done (0 to 1) as slices finish. It
    /// may throw to stop the pass (a cancelled job): no further slice starts, the running ones finish,
    /// and the exception reaches analyze's caller.
    std::function<void(double done)> progress = {};
};

struct TensorAnalysis {
    ErrorStats stats;
    // The edges follow from the plan and the params. A group's reach is how far beyond the ends of
    // its grid a value still rounds to an end code: the largest rounding error of an element not
    // clipped (half a step, or half a minifloat's top gap, when rounding to nearest), plus 2^-20 of
    // the group's largest magnitude for float rounding. Only elements whose x and x̂ are finite count.
    Histogram error;          // x − x̂, linear bins of a power-of-two width over ± the largest reach or a
                              // little more; clipped elements beyond it count as underflow and overflow
    Histogram absErrorLog;    // |x − x̂|, octave bins (four to an octave) over the 15 octaves below the
                              // power of two reaching the largest reach; smaller errors (and zeros)
                              // underflow, clipped ones overflow
    Histogram values;         // x over every group's grid widened by its reach; values beyond every
                              // group's grid (clipped) count as underflow and overflow
    std::vector<double> grid; // reconstruction values of the group shown with `values` (≤ 256 codes)
    std::int64_t gridGroup = 0; // the group with the widest range
    ClipEdges gridEdges;        // its clip thresholds
    CodeStats codes;
    ClippingStats clipping;
    Histogram scales; // operator scale values, one entry per group
};

/// Measures `codes` (produced by `plan` with `params`) against the original values `x`.
/// Throws QuantError when the sizes do not match the plan. Counts, extremes and histograms equal
/// analyzeReference's exactly; floating sums are added in another order (slices of the tensor, merged
/// in slice order), so they agree to within 1e-10 relative and never depend on the thread count.
TensorAnalysis analyze(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                       const ValuesView& x, const AnalysisOptions& options = {});
TensorAnalysis analyze(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                       std::span<const float> x, const AnalysisOptions& options = {});
/// analyze() with the importance-weighted error sums made in the same pass, into `weighted` (their
/// slices merged in order, as the other sums). Throws QuantError when the weights do not fit the tensor.
TensorAnalysis analyze(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                       const ValuesView& x, const AnalysisOptions& options,
                       const ImportanceWeights& importance, WeightedError& weighted);
/// analyze() cut at its seam, for a backend that makes the codes a part at a time: each part is
/// measured (sums, counts, clipping, histograms) right after the backend has made its codes, while x
/// and the codes are still in cache, and finish() merges the slices without reading them again. The
/// slices are the caller's (slice s holds [sliceStarts[s], sliceStarts[s + 1]), the
/// last up to the end); their sums merge in slice order, so the result depends on the data and the
/// cut alone, never on the threads, and agrees with analyze()'s as analyze() agrees with the oracle.
class SlicedAnalysis {
public:
    /// Checks the sizes as analyze() does. The params must be final (the histograms' edges follow
    /// from them); a part's codes must be when it is added. `codes` may be empty (of the plan's code
    /// target) where measuresInParts(): each part then brings its own (addPart's partCodes), and the
    /// tensor's codes need never exist at once.
    SlicedAnalysis(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                   const ValuesView& x, const AnalysisOptions& options,
                   const std::vector<std::int64_t>& sliceStarts, unsigned workers);
    ~SlicedAnalysis();
    SlicedAnalysis(const SlicedAnalysis&) = delete;
    SlicedAnalysis& operator=(const SlicedAnalysis&) = delete;

    /// With importance weights, the weighted error sums too (weighted(), once finished): call before
    /// any part is added. Throws QuantError when the weights do not fit the tensor.
    void weigh(const ImportanceWeights& importance);
    /// Elements [from, to) of slice s, added by `worker` (below the constructor's `workers`), their
    /// codes from `partCodes` (code k of element from + k) when given, else from the constructor's.
    /// A slice's parts come in order, from one thread at a time; other slices' may run at the same
    /// time, each from another worker. (The counts are kept per worker, the sums per slice.)
    void addPart(std::int64_t slice, std::int64_t from, std::int64_t to, unsigned worker,
                 const Codes* partCodes = nullptr);
    /// Whether addPart measures each part as it comes (else finish() measures the whole tensor at
    /// once, from the constructor's codes, as small tensors are).
    static bool measuresInParts(const ResolvedSpec& plan, std::int64_t n);
    /// Once every element has been added: the analysis.
    TensorAnalysis finish();
    /// After finish(), with weigh(): the weighted error sums (their slices merged in order).
    const std::optional<WeightedError>& weighted() const { return m_weighted; }

private:
    const ResolvedSpec& m_plan;
    const QuantParams& m_params;
    const Codes& m_codes;
    ValuesView m_x;
    AnalysisOptions m_options;
    std::unique_ptr<detail::SlicedPass> m_pass; // none: a tensor the oracle measures faster (finish)
    std::optional<ImportanceWeights> m_importance;
    std::optional<WeightedError> m_weighted;
};

/// The oracle: one element at a time, in order, through dequantizeValue and the accumulators' add().
TensorAnalysis analyzeReference(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                std::span<const float> x, const AnalysisOptions& options = {});

/// The clip thresholds of the first `count` groups (all by default), by ClipEdgeRule: the scalar
/// oracle's table (the fast pass works each group's out as it reaches the group, and results keep none).
EdgeRows clipEdges(const ResolvedSpec& plan, const QuantParams& params,
                   std::size_t count = ClippingStats::kAllRows);

} // namespace ql
