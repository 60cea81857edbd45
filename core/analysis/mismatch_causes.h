#pragma once
// Finding which convention difference explains mismatched codes (internal to comparison.cpp).
#include "analysis/comparison.h"
#include "quant/layout.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ql {

/// For each convention detail where B differs from A (and for B's scales), re-quantizes the
/// mismatched elements with A's arithmetic changed in that one detail and counts how many then
/// give B's code. Sorted most explanatory first; causes explaining nothing are dropped.
std::vector<MismatchCause> explainMismatches(const std::string& labelA, const std::string& labelB,
                                             const ResolvedSpec& planA, const QuantParams& paramsA,
                                             const ScaleIndexer& indexA, const ResolvedSpec& planB,
                                             const QuantParams& paramsB, const ScaleIndexer& indexB,
                                             const Codes& codesB, std::span<const float> x,
                                             const std::vector<std::int64_t>& mismatches);

/// The plain-words paragraph for a finished comparison.
std::string verdictOf(const Comparison& c);

} // namespace ql
