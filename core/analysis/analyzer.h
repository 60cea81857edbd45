#pragma once
// Everything QuantLens measures about one quantized tensor, computed without a second full float
// copy: reconstructions are made element by element while streaming over the data (two passes:
// the first finds the ranges the histograms need).
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/clipping.h"
#include "analysis/code_stats.h"
#include "analysis/error_stats.h"
#include "analysis/histogram.h"
#include "quant/params.h"
#include "quant/plan.h"

namespace ql {

struct AnalysisOptions {
    int errorBins = 101;  // odd: one bin centred on zero error
    int absErrorBins = 60; // log10 bins of |x − x̂|
    int valueBins = 256;
    int scaleBins = 64;
};

struct TensorAnalysis {
    ErrorStats stats;
    Histogram error;          // x − x̂, linear bins over ±max |error|
    Histogram absErrorLog;    // |x − x̂|, log10 bins from the smallest non-zero error; zeros underflow
    Histogram values;         // x over [min, max] of the finite values
    std::vector<double> grid; // reconstruction values of the group shown with `values` (≤ 256 codes)
    std::int64_t gridGroup = 0; // the group with the widest range
    ClipEdges gridEdges;      // its clip thresholds
    CodeStats codes;
    ClippingStats clipping;
    Histogram scales;         // operator scale values, one entry per group
};

/// Measures `codes` (produced by `plan` with `params`) against the original values `x`.
/// Throws QuantError when the sizes do not match the plan.
TensorAnalysis analyze(const QuantPlan& plan, const QuantParams& params, const Codes& codes,
                       std::span<const float> x, const AnalysisOptions& options = {});

/// The clip thresholds of every group (exposed for tests and the comparison page).
std::vector<ClipEdges> clipEdges(const QuantPlan& plan, const QuantParams& params);

} // namespace ql
