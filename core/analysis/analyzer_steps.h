#pragma once
// The steps analyze() and analyzeReference() share around their element loops (internal).
#include "analysis/analyzer.h"
#include "analysis/clip_edge_rule.h"

namespace ql::detail {

/// Throws QuantError unless `n` values, the codes and the params fit the plan's tensor (`codesInParts`:
/// the codes may also be empty, each part of a pass bringing its own).
void checkSizes(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes, std::int64_t n,
                bool codesInParts = false);
/// Checks the sizes and sets up the code and clipping statistics, with clipping rows for the first
/// `groupRows` groups.
TensorAnalysis beginAnalysis(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                             std::int64_t n, std::size_t groupRows, bool codesInParts = false);
/// Opens the error, |error| and value histograms on edges that follow from the plan and the params
/// alone, so a pass can count every element as it meets it (analyzer.h, TensorAnalysis).
void openHistograms(TensorAnalysis& a, const ResolvedSpec& plan, const QuantParams& params,
                    const AnalysisOptions& options);
/// The scale histogram, and `gridGroup` (the group with the widest range) shown with the values: its
/// grid and edges (at the end: a backend's calibration may fill the params as the pass goes).
void finishAnalysis(TensorAnalysis& a, const ResolvedSpec& plan, const QuantParams& params,
                    std::int64_t gridGroup, const AnalysisOptions& options);

} // namespace ql::detail
