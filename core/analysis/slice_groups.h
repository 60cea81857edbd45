#pragma once
// The per-group clipping sums of one slice of the fast analysis (analyzer_fast.h). Groups that no
// other slice touches are written straight into the result: no per-slice copy of the edges or the
// groups, no merge. Groups it shares with other slices go to a small table of its own, merged in
// slice order afterwards, so each group's sums are added in element order as before and never
// depend on the thread count. Groups past the result's rows (a report lists the first few thousand;
// NVFP4 has a block every 16 elements) share a scratch row that nothing reads: the pass sums the
// groups' total itself.
#include "analysis/clipping.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ql::detail {

/// The scale indices [first, last] a slice's elements may use (a superset will do); empty when
/// first > last.
using GroupRange = std::pair<std::int64_t, std::int64_t>;

class SliceGroups {
public:
    /// For every slice, the highest group an earlier slice may use and the lowest a later one may:
    /// worked out once for all the slices (a backend's cut may have hundreds).
    struct Bounds {
        std::vector<std::int64_t> below, above;
        explicit Bounds(const std::vector<GroupRange>& ranges)
            : below(ranges.size(), std::numeric_limits<std::int64_t>::min())
            , above(ranges.size(), std::numeric_limits<std::int64_t>::max()) {
            auto empty = [&](std::size_t t) { return ranges[t].first > ranges[t].second; };
            for (std::size_t t = 1; t < ranges.size(); ++t)
                below[t] = empty(t - 1) ? below[t - 1] : std::max(below[t - 1], ranges[t - 1].second);
            for (std::size_t t = ranges.size(); t-- > 1;)
                above[t - 1] = empty(t) ? above[t] : std::min(above[t], ranges[t].first);
        }
    };

    SliceGroups() = default;
    /// Slice `s` of slices using `ranges` (whose Bounds are `bounds`), writing the groups below `rows`
    /// it alone touches into `shared` (which has `rows` rows).
    SliceGroups(const std::vector<GroupRange>& ranges, const Bounds& bounds, std::size_t s,
                GroupClipping* shared, std::int64_t rows)
        : m_shared(shared)
        , m_rows(rows) {
        const auto [first, last] = ranges[s];
        if (first > last) return;
        // Groups above every earlier slice's range and below every later one's are this slice's alone.
        const std::int64_t below = bounds.below[s], above = bounds.above[s];
        m_first = first;
        m_ownFirst = below < first ? first : below + 1;
        m_ownLast = above > last ? last : above - 1;
        if (m_ownFirst > m_ownLast) m_ownFirst = last + 1, m_ownLast = last; // nothing of its own
        m_before = m_ownFirst - first;
        m_local.resize(static_cast<std::size_t>(m_before + (last - m_ownLast)));
    }

    /// The running sums of group g (one of the slice's range).
    [[gnu::always_inline]] GroupClipping& operator[](std::int64_t g) {
        if (g >= m_rows) return m_noRow;
        if (g >= m_ownFirst && g <= m_ownLast) [[likely]]
            return m_shared[g];
        return m_local[static_cast<std::size_t>(g < m_ownFirst ? g - m_first : g - m_ownLast - 1 + m_before)];
    }
    /// Adds the sums of the groups shared with other slices into the result; call it for every
    /// slice, in slice order, once all have run.
    void mergeShared() const {
        for (std::size_t i = 0; i < m_local.size(); ++i) {
            const auto k = static_cast<std::int64_t>(i);
            const std::int64_t g = k < m_before ? m_first + k : m_ownLast + 1 + (k - m_before);
            if (g < m_rows) m_shared[g].merge(m_local[i]);
        }
    }

private:
    GroupClipping* m_shared = nullptr;
    std::int64_t m_rows = 0;
    GroupClipping m_noRow;
    std::int64_t m_first = 0, m_ownFirst = 0, m_ownLast = -1;
    std::int64_t m_before = 0; // local entries below m_ownFirst
    std::vector<GroupClipping> m_local;
};

} // namespace ql::detail
