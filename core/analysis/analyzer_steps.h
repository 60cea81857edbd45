#pragma once
// The steps analyze() and analyzeReference() share around their element loops (internal).
#include "analysis/analyzer.h"
#include "analysis/clip_edge_rule.h"

#include <cmath>
#include <limits>

namespace ql::detail {

/// What the first pass finds for the histograms' edges.
struct AnalysisRanges {
    double xMin = std::numeric_limits<double>::infinity();
    double xMax = -std::numeric_limits<double>::infinity();
    double minNonZeroAbsErr = std::numeric_limits<double>::infinity();

    /// One element whose x and x̂ are finite.
    void add(float x, float xhat) {
        xMin = std::min<double>(xMin, x);
        xMax = std::max<double>(xMax, x);
        const double ae = std::fabs(static_cast<double>(x) - xhat);
        if (ae > 0) minNonZeroAbsErr = std::min(minNonZeroAbsErr, ae);
    }
    void merge(const AnalysisRanges& o) {
        xMin = std::min(xMin, o.xMin);
        xMax = std::max(xMax, o.xMax);
        minNonZeroAbsErr = std::min(minNonZeroAbsErr, o.minNonZeroAbsErr);
    }
};

/// Checks the sizes and sets up the code and clipping statistics, with clipping rows for the first
/// `groupRows` groups.
TensorAnalysis beginAnalysis(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                             std::int64_t n, std::size_t groupRows);
/// Fixes the histograms' edges from the first pass (error over ±max |error|, values over [min, max]).
void openHistograms(TensorAnalysis& a, const AnalysisRanges& r, const AnalysisOptions& options);
/// The scale histogram, and `gridGroup` (the group with the widest range) shown with the values: its
/// grid and edges (at the end: a backend's calibration may fill the params as the pass goes).
void finishAnalysis(TensorAnalysis& a, const ResolvedSpec& plan, const QuantParams& params,
                    std::int64_t gridGroup, const AnalysisOptions& options);

} // namespace ql::detail
