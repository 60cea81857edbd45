#pragma once
// The fast analysis pass's builds, one per ISA (analyzer_fast.h), each compiled in a translation unit
// of its own (analyzer_fast_<isa>.cpp) so they build side by side; analyze() and SlicedAnalysis pick
// one (internal).
#include "analysis/analyzer.h"

#include <functional>
#include <memory>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#define QL_ANALYZER_X86 1
#endif

namespace ql::detail {

/// One build's pass over a cut of the tensor into slices (SlicedAnalysis).
class SlicedPass {
public:
    virtual ~SlicedPass() = default;
    /// The weighted error sums too (before any part). Throws QuantError when `w` does not fit.
    virtual void weigh(const ImportanceWeights& w) = 0;
    /// Elements [from, to) of slice s, a slice's parts in order, from `worker` (below the workers the
    /// pass was made for; parts added at the same time come from different workers); their codes
    /// from `partCodes` (code k of element from + k) when given, else from the pass's.
    virtual void addPart(std::int64_t slice, std::int64_t from, std::int64_t to, unsigned worker,
                         const Codes* partCodes) = 0;
    /// The slices merged, in slice order; `weighted` gets their weighted sums when weigh() was called.
    virtual TensorAnalysis finish(std::optional<WeightedError>& weighted) = 0;
};

// analyzeFast: analyze()'s pass; with `importance`, the weighted error sums in the same pass (`weighted`).
namespace baseline {
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt,
                           const ImportanceWeights* importance, std::optional<WeightedError>& weighted);
std::unique_ptr<SlicedPass> slicedPass(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, const ValuesView& x, const AnalysisOptions& opt,
                                       const std::vector<std::int64_t>& sliceStarts, unsigned workers);
} // namespace baseline
#ifdef QL_ANALYZER_X86
namespace avx2 {
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt,
                           const ImportanceWeights* importance, std::optional<WeightedError>& weighted);
std::unique_ptr<SlicedPass> slicedPass(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, const ValuesView& x, const AnalysisOptions& opt,
                                       const std::vector<std::int64_t>& sliceStarts, unsigned workers);
} // namespace avx2
namespace avx512 {
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt,
                           const ImportanceWeights* importance, std::optional<WeightedError>& weighted);
std::unique_ptr<SlicedPass> slicedPass(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, const ValuesView& x, const AnalysisOptions& opt,
                                       const std::vector<std::int64_t>& sliceStarts, unsigned workers);
} // namespace avx512
#endif

} // namespace ql::detail
