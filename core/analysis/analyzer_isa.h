#pragma once
// The fast analysis pass's builds, one per ISA (analyzer_fast.h), each compiled in a translation unit
// of its own (analyzer_fast_<isa>.cpp) so they build side by side; analyze() picks one (internal).
#include "analysis/analyzer.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define QL_ANALYZER_X86 1
#endif

namespace ql::detail {

namespace baseline {
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt);
}
#ifdef QL_ANALYZER_X86
namespace avx2 {
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt);
}
namespace avx512 {
TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt);
}
#endif

} // namespace ql::detail
