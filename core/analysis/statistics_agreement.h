#pragma once
// Whether two backends' statistics of one tensor agree, by the rule every backend is held to: counts,
// extremes, histograms (edges included), the grid and the worst element exactly; floating sums within
// a relative tolerance (they are added in another order). `compare --backend-b` says it, and the
// conformance tests check it.
#include "analysis/analyzer.h"

#include <string>
#include <vector>

namespace ql {

/// The relative tolerance of the floating sums between backends (backends/README.md, "What every backend
/// returns").
inline constexpr double kStatisticsSumTolerance = 1e-10;

/// Where `got` and `want` disagree, one line each ("error histogram: counts differ"); empty when they
/// agree. `tolerance` 0 asks for the sums bit for bit.
std::vector<std::string> statisticsDifferences(const TensorAnalysis& got, const TensorAnalysis& want,
                                               double tolerance = kStatisticsSumTolerance);

} // namespace ql
