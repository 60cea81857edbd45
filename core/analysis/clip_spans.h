#pragma once
// Clipping rows gathered into spans of consecutive groups, for a plot that draws at most a fixed
// number of bars. NVFP4 has a block every 16 elements (a million on a 4096×4096 tensor): drawn in
// spans, a bar holds a span's merged counts, flagged when any of its groups loses more to clipping
// than to rounding, and the SQNR line its worst group, so a damaged block still shows.
#include "analysis/clipping.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace ql {

struct ClipSpan {
    double key = 0;                  // its middle, in group indices
    GroupClipping merged;            // its groups' counts and sums together
    int clippingDominates = 0;       // its groups where clipping causes more error than rounding
    double worstSqnr = std::nan(""); // its lowest finite group SQNR (NaN: none is finite)
};

/// Bars a clipping plot draws at most (the GUI's clipping page).
inline constexpr std::size_t kMaxClipBars = 2048;

/// Groups per span: 1 up to `maxBars` groups, else the fewest that keep the spans within `maxBars`.
std::size_t clipSpanSize(std::size_t groups, std::size_t maxBars = kMaxClipBars);

/// The spans of `groups`, in order; the last may hold fewer groups than the others.
std::vector<ClipSpan> clipSpans(const GroupRows& groups, std::size_t maxBars = kMaxClipBars);

} // namespace ql
