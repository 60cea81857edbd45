#pragma once
// Clipping per scale group (channel, group or block): which elements the code range cut off,
// and how much of the error they cause versus plain rounding.
//
// An element is clipped low (high) when it lies below (above) the group's lowest (highest)
// reconstruction by more than rounding alone explains: half a step for round-to-nearest, a whole
// step for floor/ceil/trunc, nothing for floating targets (beyond ±max·step).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ql {

struct GroupClipping {
    std::int64_t count = 0;
    std::int64_t clippedLow = 0;
    std::int64_t clippedHigh = 0;
    std::int64_t flushedToZero = 0; // floating targets: x ≠ 0 reconstructed as 0
    double clipErrorSq = 0;         // Σ(x − x̂)² over clipped elements
    double roundErrorSq = 0;        // Σ(x − x̂)² over the rest
    double sumSqX = 0;
    double maxAbsError = 0;

    double clippedFraction() const;
    /// SQNR of this group alone in dB (NaN when empty, +Inf when exact).
    double sqnrDb() const;
    void merge(const GroupClipping& o);
};

/// The reconstruction range of one group and how far rounding alone can miss it.
struct ClipEdges {
    double low = 0;
    double high = 0;
    double roundingSlack = 0;
};

class ClippingStats {
public:
    ClippingStats() = default;
    ClippingStats(std::vector<ClipEdges> edges, bool floatTarget);

    /// One finite element (x, x̂ finite) of group g.
    inline void add(std::int64_t group, float x, float xhat);
    void merge(const ClippingStats& other);

    const std::vector<GroupClipping>& groups() const { return m_groups; }
    const std::vector<ClipEdges>& edges() const { return m_edges; }
    GroupClipping total() const;

private:
    std::vector<ClipEdges> m_edges;
    std::vector<GroupClipping> m_groups;
    bool m_float = false;
};

// Inline: the analysis calls it once per element.
inline void ClippingStats::add(std::int64_t group, float xf, float xhatf) {
    const auto g = static_cast<std::size_t>(group);
    auto& s = m_groups[g];
    const auto& e = m_edges[g];
    const double x = xf;
    const double err = x - static_cast<double>(xhatf);
    ++s.count;
    s.sumSqX += x * x;
    s.maxAbsError = std::max(s.maxAbsError, std::fabs(err));
    const bool low = x < e.low - e.roundingSlack;
    const bool high = x > e.high + e.roundingSlack;
    s.clippedLow += low;
    s.clippedHigh += high;
    (low || high ? s.clipErrorSq : s.roundErrorSq) += err * err;
    if (m_float && x != 0.0 && xhatf == 0.0f) ++s.flushedToZero;
}

} // namespace ql
