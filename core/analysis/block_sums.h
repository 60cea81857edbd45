// The sums over one slice of the fast analysis, in four double lanes (GCC vector
// types: strict IEEE arithmetic, so the compiler may not reorder a scalar sum for us, but the lanes
// are ours to order). The tensor-wide sums stay in their lanes for the whole slice; each group's
// segment keeps its own lanes only for what the group reports (signal, clipping, rounding and
// clipping error, worst error), reduced when the segment ends if the group has a row of its own (a
// report lists the first few thousand groups; NVFP4 has a block every 16 elements). Every segment's
// lanes are also added, lane by lane, to the slice's total of every group, reduced once at the end:
// so a short segment costs little more than its elements, and the totals do not depend on which
// groups have rows. Only blocks whose x and x̂ are all finite come here; every reduction is in lane
// order, so the result is a function of the data alone.
// Compiled once per ISA, in the fast pass's namespace (analyzer_fast.h includes it), so the vectors are
// lowered for the ISA's registers. No include guard, as analyzer_fast.h.
#if !defined(QL_ANALYZER_NS)
#error "block_sums.h is part of analyzer_fast.h"
#endif
#include "analysis/clipping.h"
#include "analysis/error_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ql::detail::QL_ANALYZER_NS {

using D4 = double __attribute__((vector_size(32)));
using F4 = float __attribute__((vector_size(16)));
using I4 = std::int64_t __attribute__((vector_size(32)));

// Four floats from memory as doubles (exact): one instruction where the ISA has it (GCC 12 widens
// a vector of four floats two at a time).
[[gnu::always_inline]] inline D4 widened(const float* p) {
#ifdef QL_ANALYZER_AVX2
    return reinterpret_cast<D4>(_mm256_cvtps_pd(_mm_loadu_ps(p)));
#else
    F4 f;
    std::memcpy(&f, p, sizeof f);
    return __builtin_convertvector(f, D4);
#endif
}

/// One group's run in a batch of short groups staged together (SliceSums::addGroups).
struct BatchGroup {
    int offset = 0, length = 0; // its elements in the staged block
    std::int64_t first = 0;     // the flat index of its first element
    ClipEdges edges;
    GroupClipping* row = nullptr; // its clipping row; none: it counts in the slice's total only
};

class SliceSums {
public:
    SliceSums() = default;

    /// Starts a segment of one group with these clip edges.
    [[gnu::always_inline]] void beginGroup(const ClipEdges& e) { m_group = GroupLanes(e); }

    /// `n` finite elements x[k], xh[k] of the current group, flat indices first + k, in index order.
    /// FloatTarget: count flushes to zero (x ≠ 0 reconstructed as 0). Always inlined: the analysis
    /// pass is built per ISA (analyzer_fast.h) and this is its body.
    template <bool FloatTarget>
    [[gnu::always_inline]] void addBlock(const float* x, const float* xh, int n, std::int64_t first) {
        SliceLanes s = m_slice; // locals, so the lanes stay in registers through the loop
        GroupLanes g = m_group;
        add<FloatTarget>(s, g, x, xh, n, first);
        m_slice = s;
        m_group = g;
    }

    /// Ends the segment of a group with a row: its sums into `row`, and into the slice's.
    [[gnu::always_inline]] void endGroup(GroupClipping& row) { end(m_slice, m_group, &row); }
    /// Ends the segment of a group without a row: its sums into the slice's only.
    [[gnu::always_inline]] void endGroupWithoutRow() { end(m_slice, m_group, nullptr); }

    /// Whole groups in a row, each all finite, as beginGroup, addBlock and endGroup would take them
    /// one by one (the same operations, so the same bits), with the slice's lanes held in registers
    /// across them: MX and NVFP4 blocks are 32 and 16 elements. Each group compares its elements with
    /// its clip edges in the loop rather than testing its extremes first: with NVFP4's rounded scales
    /// about half the blocks clip, by chance, and that branch mispredicted cost more than the compares
    /// (the same bits either way).
    template <bool FloatTarget>
    [[gnu::always_inline]] void addGroups(const float* x, const float* xh, const BatchGroup* groups,
                                          int count) {
        SliceLanes s = m_slice;
        for (int j = 0; j < count; ++j) {
            const BatchGroup& b = groups[j];
            GroupLanes g(b.edges);
            addLanes<FloatTarget, true>(s, g, x + b.offset, xh + b.offset, b.length, b.first);
            end(s, g, b.row);
        }
        m_slice = s;
    }

    /// The slice's sums into its error statistics, and its groups' into `groups` (call once, after
    /// the last segment).
    void finish(ErrorStats& stats, GroupClipping& groups) const {
        const SliceLanes& l = m_slice;
        if (l.count == 0) return;
        const GroupClipping t =
            reduced(l.count, l.tLow, l.tHigh, l.tFtz, l.tClipSq, l.tRoundSq, l.tSqX, l.tMax);
        groups.merge(t);
        ErrorStats::Sums s;
        s.count = s.finite = l.count;
        s.over1e3 = count(l.over1);
        s.over5e3 = count(l.over5);
        s.sumSqX = t.sumSqX;
        s.sumSqXhat = sum(l.sqXh);
        s.sumDot = sum(l.dot);
        s.sumSqErr = sum(l.tClipSq + l.tRoundSq);
        s.sumAbsErr = sum(l.absErr);
        // The largest lane, and of equal lanes the first index.
        s.maxAbsErr = std::max(std::max(l.max[0], l.max[1]), std::max(l.max[2], l.max[3]));
        s.worstIndex = std::numeric_limits<std::int64_t>::max();
        for (int k = 0; k < 4; ++k)
            if (l.max[k] == s.maxAbsErr) s.worstIndex = std::min<std::int64_t>(s.worstIndex, l.maxAt[k]);
        stats.merge(ErrorStats::fromSums(s));
    }

private:
    struct SliceLanes {
        // The slice's.
        D4 sqXh{}, dot{}, absErr{};
        D4 max = D4{} - 1.0;
        I4 maxAt{};
        I4 over1{}, over5{};
        // Every group's, added a segment at a time.
        std::int64_t count = 0;
        D4 tClipSq{}, tRoundSq{}, tSqX{}, tMax{};
        I4 tLow{}, tHigh{}, tFtz{};
    };
    struct GroupLanes { // the current group's
        GroupLanes() = default;
        explicit GroupLanes(const ClipEdges& e)
            : lowT(e.low - e.roundingSlack)
            , highT(e.high + e.roundingSlack) {}
        double lowT = 0, highT = 0;
        D4 sqX{}, clipSq{}, roundSq{}, max{};
        I4 low{}, high{}, ftz{};
        std::int64_t count = 0;
    };

    // A block whose x all lie within the group's clip edges (the common case: absmax never clips)
    // adds every e² to the rounding lanes and counts nothing clipped, without a compare per element;
    // the same additions as the general loop makes, so the same bits.
    template <bool FloatTarget>
    [[gnu::always_inline]] static void add(SliceLanes& s, GroupLanes& g, const float* x, const float* xh,
                                           int n, std::int64_t first) {
        if (withinEdges(x, n, g.lowT, g.highT))
            addLanes<FloatTarget, false>(s, g, x, xh, n, first);
        else
            addLanes<FloatTarget, true>(s, g, x, xh, n, first);
    }

    // Whether no x is below `low` or above `high`, from the block's least and greatest x (exact in
    // double, so the same tests the loop makes). Finite blocks only; a NaN edge answers no.
    [[gnu::always_inline]] static bool withinEdges(const float* x, int n, double low, double high) {
        using F8 = float __attribute__((vector_size(32)));
        if (n < 8) return false;
        F8 lo, hi;
        std::memcpy(&lo, x, sizeof lo);
        hi = lo;
        int k = 8;
        for (; k + 8 <= n; k += 8) {
            F8 v;
            std::memcpy(&v, x + k, sizeof v);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        float least = lo[0], greatest = hi[0];
        for (int l = 1; l < 8; ++l)
            least = std::min(least, lo[l]), greatest = std::max(greatest, hi[l]);
        for (; k < n; ++k)
            least = std::min(least, x[k]), greatest = std::max(greatest, x[k]);
        return static_cast<double>(least) >= low && static_cast<double>(greatest) <= high;
    }

    template <bool FloatTarget, bool MayClip>
    [[gnu::always_inline]] static void addLanes(SliceLanes& s, GroupLanes& g, const float* x, const float* xh,
                                                int n, std::int64_t first) {
        const D4 lowT = D4{} + g.lowT, highT = D4{} + g.highT;
        const D4 t1 = D4{} + 1e-3, t5 = D4{} + 5e-3, zero = {};
        const I4 absMask = I4{} + 0x7FFFFFFFFFFFFFFF;
        D4 blockMax = D4{} - 1.0; // each lane's largest |error| in this block
        int k = 0;
        for (; k + 4 <= n; k += 4) {
            const D4 xv = widened(x + k), hv = widened(xh + k);
            const D4 e = xv - hv;
            const D4 ae = reinterpret_cast<D4>(reinterpret_cast<I4>(e) & absMask);
            const D4 ax = reinterpret_cast<D4>(reinterpret_cast<I4>(xv) & absMask);
            const D4 e2 = e * e;
            g.sqX += xv * xv;
            s.sqXh += hv * hv;
            s.dot += xv * hv;
            s.absErr += ae;
            blockMax = ae > blockMax ? ae : blockMax;
            // exceeds(): with |x| = 0 the threshold is 0, so ae > t·|x| is ae ≠ 0 as it should be.
            s.over1 -= ae > t1 * ax;
            s.over5 -= ae > t5 * ax;
            if constexpr (MayClip) {
                const I4 low = xv<lowT, high = xv> highT;
                g.low -= low;
                g.high -= high;
                g.clipSq += (low | high) ? e2 : zero;
                g.roundSq += (low | high) ? zero : e2;
            } else {
                g.roundSq += e2; // (the general loop's clipSq += 0 changes no bit: clipSq is never -0)
            }
            if constexpr (FloatTarget) g.ftz -= (xv != zero) & (hv == zero);
        }
        g.max = blockMax > g.max ? blockMax : g.max;
        // Each lane keeps the first index of its largest |error| (its first element beats -1): a lane
        // whose block beats it finds the first element at the block's largest (rare after the first
        // blocks, so this costs less than a select per element).
        const I4 record = blockMax > s.max;
        if ((record[0] | record[1] | record[2] | record[3]) != 0) [[unlikely]]
            for (int l = 0; l < 4; ++l) {
                if (!record[l]) continue;
                int j = l;
                while (std::fabs(static_cast<double>(x[j]) - xh[j]) != blockMax[l])
                    j += 4;
                s.max[l] = blockMax[l];
                s.maxAt[l] = first + j;
            }
        // The tail, element by element into lane 0 with the same operations.
        for (; k < n; ++k) {
            const double xv = x[k], hv = xh[k], e = xv - hv, ae = std::fabs(e), e2 = e * e;
            g.sqX[0] += xv * xv;
            s.sqXh[0] += hv * hv;
            s.dot[0] += xv * hv;
            s.absErr[0] += ae;
            if (ae > s.max[0]) s.max[0] = ae, s.maxAt[0] = first + k;
            g.max[0] = std::max(g.max[0], ae);
            s.over1[0] += ae > 1e-3 * std::fabs(xv);
            s.over5[0] += ae > 5e-3 * std::fabs(xv);
            const bool low = xv<g.lowT, high = xv> g.highT;
            g.low[0] += low;
            g.high[0] += high;
            (low || high ? g.clipSq[0] : g.roundSq[0]) += e2;
            if constexpr (FloatTarget) g.ftz[0] += xv != 0.0 && hv == 0.0;
        }
        g.count += n;
    }

    // A group's sums into its row (if any) and into the slice's.
    [[gnu::always_inline]] static void end(SliceLanes& s, GroupLanes& g, GroupClipping* row) {
        if (g.count == 0) return;
        if (row) row->merge(reduced(g.count, g.low, g.high, g.ftz, g.clipSq, g.roundSq, g.sqX, g.max));
        s.count += g.count;
        s.tLow += g.low;
        s.tHigh += g.high;
        s.tFtz += g.ftz;
        s.tClipSq += g.clipSq;
        s.tRoundSq += g.roundSq;
        s.tSqX += g.sqX;
        s.tMax = g.max > s.tMax ? g.max : s.tMax;
    }

    static GroupClipping reduced(std::int64_t n, const I4& low, const I4& high, const I4& ftz,
                                 const D4& clipSq, const D4& roundSq, const D4& sqX, const D4& max) {
        GroupClipping c;
        c.count = n;
        c.clippedLow = count(low);
        c.clippedHigh = count(high);
        c.flushedToZero = count(ftz);
        c.clipErrorSq = sum(clipSq);
        c.roundErrorSq = sum(roundSq);
        c.sumSqX = sum(sqX);
        c.maxAbsError = std::max(std::max(max[0], max[1]), std::max(max[2], max[3]));
        return c;
    }
    static double sum(const D4& v) { return ((v[0] + v[1]) + v[2]) + v[3]; }
    static std::int64_t count(const I4& v) { return ((v[0] + v[1]) + v[2]) + v[3]; }

    SliceLanes m_slice;
    GroupLanes m_group;
};

} // namespace ql::detail::QL_ANALYZER_NS
