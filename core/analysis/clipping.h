#pragma once
// Clipping per scale group (channel, group or block): which elements the code range cut off,
// and how much of the error they cause versus plain rounding.
//
// An element is clipped low (high) when it lies below (above) the group's lowest (highest)
// reconstruction by more than rounding alone explains: half a step for round-to-nearest, a whole
// step for floor/ceil/trunc, nothing for floating targets (beyond ±max·step).
#include "base/host_device.h"
#include "base/huge_page_allocator.h"

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
    QL_HOST_DEVICE inline void merge(const GroupClipping& o);
};

/// The reconstruction range of one group and how far rounding alone can miss it.
struct ClipEdges {
    double low = 0;
    double high = 0;
    double roundingSlack = 0;
};

/// One row per group: as many rows as NVFP4 has blocks, so held in huge pages where they are large,
/// and made without a pass that writes zeros (ZeroedHugePageAllocator).
using GroupRows = std::vector<GroupClipping, ZeroedHugePageAllocator<GroupClipping>>;
using EdgeRows = std::vector<ClipEdges, ZeroedHugePageAllocator<ClipEdges>>;

class ClippingStats {
public:
    ClippingStats() = default;
    /// Rows for the first `rows` of `groupCount` groups (all, or only what a report lists: a pass that
    /// keeps fewer sums the total itself and hands it to setTotal when it ends).
    ClippingStats(std::size_t rows, std::size_t groupCount, bool floatTarget);
    static constexpr std::size_t kAllRows = static_cast<std::size_t>(-1);

    /// One finite element (x, x̂ finite) of group g, whose edges are e.
    inline void add(std::int64_t group, const ClipEdges& e, float x, float xhat);
    /// The same into a group's running sums held elsewhere (a segment's, in registers).
    QL_HOST_DEVICE static inline void addTo(GroupClipping& s, const ClipEdges& e, bool floatTarget, float x,
                                            float xhat);
    bool floatTarget() const { return m_float; }
    /// The groups' sums, for a pass that fills them in place (the fast analysis's slices).
    GroupClipping* groupData() { return m_groups.data(); }

    const GroupRows& groups() const { return m_groups; }
    GroupClipping total() const;
    /// Rebuilt from a report: the rows it lists, out of `groupCount`, and its total.
    static ClippingStats listed(std::vector<GroupClipping> rows, std::size_t groupCount,
                                const GroupClipping& total, bool floatTarget) {
        ClippingStats c(rows.size(), groupCount, floatTarget);
        c.m_groups.assign(rows.begin(), rows.end());
        c.summarise(rows.size(), total, groupCount);
        return c;
    }
    /// Ends a pass that summed the groups' total itself (the fast analysis: the same bits whichever
    /// groups have rows) and kept rows for the first groups only, or all of them.
    void setTotal(const GroupClipping& total) { summarise(m_groups.size(), total, m_groupCount); }
    /// Groups measured, including those without a row.
    std::size_t groupCount() const { return m_groupCount; }
    /// Keeps the first `n` groups' rows (what a report lists) and the total as it is now, so a
    /// whole-model run holds a bounded summary of each finished tensor instead of every group.
    void keepFirstGroups(std::size_t n) {
        if (n < m_groups.size()) summarise(n, total(), m_groupCount);
    }

private:
    GroupRows m_groups;
    bool m_float = false;
    std::size_t m_groupCount = 0;
    // Set by summarise: total() is m_total, whatever rows are kept.
    bool m_hasTotal = false;
    GroupClipping m_total;

    // The one way to a summary: rows for the first `rows` groups, and the total.
    void summarise(std::size_t rows, const GroupClipping& total, std::size_t groupCount) {
        m_total = total;
        m_groupCount = groupCount;
        m_hasTotal = true;
        if (rows < m_groups.size()) {
            m_groups.resize(rows);
            m_groups.shrink_to_fit();
        }
    }
};

// Inline: the analysis calls it once per element.
inline void ClippingStats::add(std::int64_t group, const ClipEdges& e, float xf, float xhatf) {
    addTo(m_groups[static_cast<std::size_t>(group)], e, m_float, xf, xhatf);
}

QL_HOST_DEVICE inline void ClippingStats::addTo(GroupClipping& s, const ClipEdges& e, bool floatTarget,
                                                float xf, float xhatf) {
    const double x = xf;
    const double err = x - static_cast<double>(xhatf);
    const double absErr = err < 0 ? -err : err;
    ++s.count;
    s.sumSqX += x * x;
    s.maxAbsError = absErr > s.maxAbsError ? absErr : s.maxAbsError;
    const bool low = x < e.low - e.roundingSlack;
    const bool high = x > e.high + e.roundingSlack;
    s.clippedLow += low;
    s.clippedHigh += high;
    (low || high ? s.clipErrorSq : s.roundErrorSq) += err * err;
    if (floatTarget && x != 0.0 && xhatf == 0.0f) ++s.flushedToZero;
}

QL_HOST_DEVICE inline void GroupClipping::merge(const GroupClipping& o) {
    count += o.count;
    clippedLow += o.clippedLow;
    clippedHigh += o.clippedHigh;
    flushedToZero += o.flushedToZero;
    clipErrorSq += o.clipErrorSq;
    roundErrorSq += o.roundErrorSq;
    sumSqX += o.sumSqX;
    maxAbsError = o.maxAbsError > maxAbsError ? o.maxAbsError : maxAbsError;
}

} // namespace ql
