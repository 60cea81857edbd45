#pragma once
// Any layout seen as rows of the last axis cut into runs that share one scale, so the hot cases
// become straight vector loops: per-tensor and per-channel(axis 0) give one run per row, per-group
// along the last axis runs of g, per-channel along the last axis one scale per element (a
// "per-element" segment whose scales are contiguous). Other axes only move each row's base.
#include "quant/layout.h"
#include "quant/resolved_spec.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ql {

struct Segment {
    std::int64_t begin = 0; // flat element index
    std::int64_t length = 0;
    std::int64_t scale = 0;  // scale index of the first element
    bool perElement = false; // element i uses scale + i
    // 0: one run. Otherwise the segment is length / runLength whole runs of this length side by side,
    // run j using scale + j (RowWalker::forSpans: MX and NVFP4 blocks along a row).
    std::int64_t runLength = 0;
};

class RowWalker {
public:
    explicit RowWalker(const ResolvedSpec& plan)
        : m_indexer(plan.layout, plan.shape) {
        m_inner = plan.shape.empty() ? 1 : plan.shape.back();
        m_rows = m_inner ? elementCount(plan.shape) / m_inner : 0;
        const auto& dims = plan.layout.dims;
        m_ownRows = dims.size() >= 2;
        for (std::size_t d = 0; d + 1 < dims.size(); ++d)
            m_ownRows = m_ownRows && dims[d].kind == DimMapping::Kind::Full;
        if (dims.empty()) return;
        const DimMapping& last = dims.back();
        m_perElement = last.kind == DimMapping::Kind::Full;
        m_groups = plan.layout.scaleShape(plan.shape).back();
        if (m_perElement) return;
        if (last.kind == DimMapping::Kind::Block) m_block = last.block;
        // Runs of the last axis: [start, end) with its group, empty ragged groups skipped.
        std::int64_t g = 0;
        for (std::int64_t i = 0; i < m_inner;) {
            std::int64_t end = m_inner;
            if (last.kind == DimMapping::Kind::Block) {
                g = i / last.block;
                end = std::min(m_inner, (g + 1) * last.block);
            } else if (last.kind == DimMapping::Kind::Ragged) {
                while (last.ends[static_cast<std::size_t>(g)] <= i)
                    ++g;
                end = last.ends[static_cast<std::size_t>(g)];
            }
            m_starts.push_back(i);
            m_runGroup.push_back(g);
            i = end;
        }
        m_starts.push_back(m_inner);
    }

    std::int64_t inner() const { return m_inner; }
    std::int64_t rows() const { return m_rows; }
    /// True when every axis but the last is per-index: each row owns its scale groups.
    bool rowsOwnGroups() const { return m_ownRows; }
    std::int64_t rowScaleCount() const { return m_groups; }
    /// Scale index of group 0 of the last axis in row r.
    std::int64_t rowFirstScale(std::int64_t r) const {
        const std::int64_t firstGroup = m_perElement ? 0 : m_runGroup.front();
        return m_indexer.scaleIndexOf(r * m_inner) - firstGroup;
    }

    /// The scale indices [first, last] the elements [begin, end) may use, counted over whole rows
    /// (a superset); first > last when there are none.
    std::pair<std::int64_t, std::int64_t> scaleRange(std::int64_t begin, std::int64_t end) const {
        if (begin >= end || m_inner == 0) return {0, -1};
        const bool runs = !m_perElement && !m_runGroup.empty();
        const std::int64_t low = runs ? m_runGroup.front() : 0;
        const std::int64_t high = m_perElement ? m_inner - 1 : runs ? m_runGroup.back() : 0;
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        std::int64_t last = std::numeric_limits<std::int64_t>::min();
        for (std::int64_t r = begin / m_inner; r * m_inner < end; ++r) { // runs ascend along a row
            first = std::min(first, rowFirstScale(r) + low);
            last = std::max(last, rowFirstScale(r) + high);
        }
        return {first, last};
    }

    /// fn(Segment) over the elements [begin, end), in order.
    template <typename Fn> void forSegments(std::int64_t begin, std::int64_t end, Fn&& fn) const {
        if (begin >= end || m_inner == 0) return;
        for (std::int64_t r = begin / m_inner; r * m_inner < end; ++r) {
            const std::int64_t rowStart = r * m_inner;
            const std::int64_t c0 = std::max(begin, rowStart) - rowStart;
            const std::int64_t c1 = std::min(end, rowStart + m_inner) - rowStart;
            const std::int64_t base = rowFirstScale(r);
            if (m_perElement) {
                fn(Segment{rowStart + c0, c1 - c0, base + c0, true});
                continue;
            }
            auto k = static_cast<std::size_t>(std::upper_bound(m_starts.begin(), m_starts.end(), c0) -
                                              m_starts.begin()) -
                     1;
            for (std::int64_t c = c0; c < c1; ++k) {
                const std::int64_t stop = std::min(c1, m_starts[k + 1]);
                fn(Segment{rowStart + c, stop - c, base + m_runGroup[k], false});
                c = stop;
            }
        }
    }

    /// As forSegments, but the whole blocks of a block layout along the last axis come together: a
    /// row's run of whole blocks is one segment with runLength set (a block cut by `begin` or `end`,
    /// and a row's short last block, stay segments of their own). A pass over short groups then pays
    /// for a call per stretch of blocks, not per block.
    template <typename Fn> void forSpans(std::int64_t begin, std::int64_t end, Fn&& fn) const {
        if (m_block == 0) return forSegments(begin, end, fn);
        if (begin >= end || m_inner == 0) return;
        const std::int64_t b = m_block;
        for (std::int64_t r = begin / m_inner; r * m_inner < end; ++r) {
            const std::int64_t rowStart = r * m_inner;
            std::int64_t c = std::max(begin, rowStart) - rowStart;
            const std::int64_t c1 = std::min(end, rowStart + m_inner) - rowStart;
            const std::int64_t base = rowFirstScale(r); // block k of the row uses base + k
            if (c % b != 0) {                           // the tail of a block the range starts inside
                const std::int64_t stop = std::min(c1, (c / b + 1) * b);
                fn(Segment{rowStart + c, stop - c, base + c / b, false});
                c = stop;
            }
            if (const std::int64_t whole = (c1 - c) / b; whole > 0) {
                fn(Segment{rowStart + c, whole * b, base + c / b, false, b});
                c += whole * b;
            }
            if (c < c1) fn(Segment{rowStart + c, c1 - c, base + c / b, false});
        }
    }

private:
    ScaleIndexer m_indexer;
    std::int64_t m_inner = 1;
    std::int64_t m_rows = 0;
    std::int64_t m_groups = 1;
    bool m_ownRows = false;
    bool m_perElement = false;
    std::int64_t m_block = 0;             // the last axis's block, for a block layout there
    std::vector<std::int64_t> m_starts;   // run starts along the last axis, then inner
    std::vector<std::int64_t> m_runGroup; // group of each run
};

} // namespace ql
