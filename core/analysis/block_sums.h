#pragma once
// The first pass's sums over one slice of the fast analysis, in four double lanes (GCC vector
// types: strict IEEE arithmetic, so the compiler may not reorder a scalar sum for us, but the lanes
// are ours to order). The tensor-wide sums stay in their lanes for the whole slice; each group's
// segment keeps its own lanes only for what the group reports (signal, clipping, rounding and
// clipping error, worst error), reduced when the segment ends if the group has a row of its own (a
// report lists the first few thousand groups; NVFP4 has a block every 16 elements). Every segment's
// lanes are also added, lane by lane, to the slice's total of every group, reduced once at the end:
// so a short segment costs little more than its elements, and the totals do not depend on which
// groups have rows. Only blocks whose x and x̂ are all finite come here; every reduction is in lane
// order, so the result is a function of the data alone.
#include "analysis/analyzer_steps.h"
#include "analysis/clipping.h"
#include "analysis/error_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ql::detail {

using D4 = double __attribute__((vector_size(32)));
using F4 = float __attribute__((vector_size(16)));
using I4 = std::int64_t __attribute__((vector_size(32)));

class SliceSums {
public:
    SliceSums() = default;

    /// Starts a segment of one group with these clip edges.
    [[gnu::always_inline]] void beginGroup(const ClipEdges& e) {
        m_lowT = e.low - e.roundingSlack;
        m_highT = e.high + e.roundingSlack;
        m_gSqX = m_gClipSq = m_gRoundSq = m_gMax = D4{};
        m_gLow = m_gHigh = m_gFtz = I4{};
        m_gCount = 0;
    }

    /// `n` finite elements x[k], xh[k] of the current group, flat indices first + k, in index order.
    /// FloatTarget: count flushes to zero (x ≠ 0 reconstructed as 0). Always inlined: the analysis
    /// pass is built per ISA (analyzer_fast.h) and this is its body.
    template <bool FloatTarget>
    [[gnu::always_inline]] void addBlock(const float* x, const float* xh, int n, std::int64_t first) {
        const D4 lowT = D4{} + m_lowT, highT = D4{} + m_highT;
        const D4 t1 = D4{} + 1e-3, t5 = D4{} + 5e-3, zero = {};
        const I4 absMask = I4{} + 0x7FFFFFFFFFFFFFFF;
        I4 at = I4{0, 1, 2, 3} + first;
        int k = 0;
        for (; k + 4 <= n; k += 4, at += 4) {
            F4 xf, hf;
            std::memcpy(&xf, x + k, sizeof xf);
            std::memcpy(&hf, xh + k, sizeof hf);
            const D4 xv = __builtin_convertvector(xf, D4), hv = __builtin_convertvector(hf, D4);
            const D4 e = xv - hv;
            const D4 ae = reinterpret_cast<D4>(reinterpret_cast<I4>(e) & absMask);
            const D4 ax = reinterpret_cast<D4>(reinterpret_cast<I4>(xv) & absMask);
            const D4 e2 = e * e;
            m_gSqX += xv * xv;
            m_sqXh += hv * hv;
            m_dot += xv * hv;
            m_absErr += ae;
            // Each lane keeps the first index of its largest |error| (its first element beats -1).
            const I4 larger = ae > m_max;
            m_max = larger ? ae : m_max;
            m_maxAt = larger ? at : m_maxAt;
            m_gMax = ae > m_gMax ? ae : m_gMax;
            // exceeds(): with |x| = 0 the threshold is 0, so ae > t·|x| is ae ≠ 0 as it should be.
            m_over1 -= ae > t1 * ax;
            m_over5 -= ae > t5 * ax;
            const I4 low = xv<lowT, high = xv> highT;
            m_gLow -= low;
            m_gHigh -= high;
            m_gClipSq += (low | high) ? e2 : zero;
            m_gRoundSq += (low | high) ? zero : e2;
            if constexpr (FloatTarget) m_gFtz -= (xv != zero) & (hv == zero);
            m_xMin = xv < m_xMin ? xv : m_xMin;
            m_xMax = xv > m_xMax ? xv : m_xMax;
            m_minNz = (ae > zero) & (ae < m_minNz) ? ae : m_minNz;
        }
        // The tail, element by element into lane 0 with the same operations.
        for (; k < n; ++k) {
            const double xv = x[k], hv = xh[k], e = xv - hv, ae = std::fabs(e), e2 = e * e;
            m_gSqX[0] += xv * xv;
            m_sqXh[0] += hv * hv;
            m_dot[0] += xv * hv;
            m_absErr[0] += ae;
            if (ae > m_max[0]) m_max[0] = ae, m_maxAt[0] = first + k;
            m_gMax[0] = std::max(m_gMax[0], ae);
            m_over1[0] += ae > 1e-3 * std::fabs(xv);
            m_over5[0] += ae > 5e-3 * std::fabs(xv);
            const bool low = xv<m_lowT, high = xv> m_highT;
            m_gLow[0] += low;
            m_gHigh[0] += high;
            (low || high ? m_gClipSq[0] : m_gRoundSq[0]) += e2;
            if constexpr (FloatTarget) m_gFtz[0] += xv != 0.0 && hv == 0.0;
            m_xMin[0] = xv < m_xMin[0] ? xv : m_xMin[0];
            m_xMax[0] = xv > m_xMax[0] ? xv : m_xMax[0];
            if (ae > 0 && ae < m_minNz[0]) m_minNz[0] = ae;
        }
        m_gCount += n;
    }

    /// Ends the segment of a group with a row: its sums into `slot`, and into the slice's.
    [[gnu::always_inline]] void endGroup(GroupClipping& slot) {
        if (m_gCount == 0) return;
        slot.merge(reduced(m_gCount, m_gLow, m_gHigh, m_gFtz, m_gClipSq, m_gRoundSq, m_gSqX, m_gMax));
        endGroupWithoutRow();
    }
    /// Ends the segment of a group without a row: its sums into the slice's only.
    [[gnu::always_inline]] void endGroupWithoutRow() {
        m_count += m_gCount;
        m_tLow += m_gLow;
        m_tHigh += m_gHigh;
        m_tFtz += m_gFtz;
        m_tClipSq += m_gClipSq;
        m_tRoundSq += m_gRoundSq;
        m_tSqX += m_gSqX;
        m_tMax = m_gMax > m_tMax ? m_gMax : m_tMax;
        m_gCount = 0;
    }

    /// The slice's sums into its error statistics and ranges, and its groups' into `groups` (call
    /// once, after the last segment).
    void finish(ErrorStats& stats, AnalysisRanges& ranges, GroupClipping& groups) const {
        if (m_count == 0) return;
        const GroupClipping t =
            reduced(m_count, m_tLow, m_tHigh, m_tFtz, m_tClipSq, m_tRoundSq, m_tSqX, m_tMax);
        groups.merge(t);
        ErrorStats::Sums s;
        s.count = s.finite = m_count;
        s.over1e3 = count(m_over1);
        s.over5e3 = count(m_over5);
        s.sumSqX = t.sumSqX;
        s.sumSqXhat = sum(m_sqXh);
        s.sumDot = sum(m_dot);
        s.sumSqErr = sum(m_tClipSq + m_tRoundSq);
        s.sumAbsErr = sum(m_absErr);
        // The largest lane, and of equal lanes the first index.
        s.maxAbsErr = std::max(std::max(m_max[0], m_max[1]), std::max(m_max[2], m_max[3]));
        s.worstIndex = std::numeric_limits<std::int64_t>::max();
        for (int l = 0; l < 4; ++l)
            if (m_max[l] == s.maxAbsErr) s.worstIndex = std::min<std::int64_t>(s.worstIndex, m_maxAt[l]);
        stats.merge(ErrorStats::fromSums(s));
        AnalysisRanges r;
        for (int l = 0; l < 4; ++l) {
            r.xMin = std::min(r.xMin, m_xMin[l]);
            r.xMax = std::max(r.xMax, m_xMax[l]);
            r.minNonZeroAbsErr = std::min(r.minNonZeroAbsErr, m_minNz[l]);
        }
        ranges.merge(r);
    }

private:
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

    static constexpr double kInf = std::numeric_limits<double>::infinity();
    // The slice's.
    D4 m_sqXh{}, m_dot{}, m_absErr{};
    D4 m_max = D4{} - 1.0;
    I4 m_maxAt{};
    I4 m_over1{}, m_over5{};
    D4 m_xMin = D4{} + kInf, m_xMax = D4{} - kInf, m_minNz = D4{} + kInf;
    // Every group's, added a segment at a time.
    std::int64_t m_count = 0;
    D4 m_tClipSq{}, m_tRoundSq{}, m_tSqX{}, m_tMax{};
    I4 m_tLow{}, m_tHigh{}, m_tFtz{};
    // The current group's.
    double m_lowT = 0, m_highT = 0;
    D4 m_gSqX{}, m_gClipSq{}, m_gRoundSq{}, m_gMax{};
    I4 m_gLow{}, m_gHigh{}, m_gFtz{};
    std::int64_t m_gCount = 0;
};

} // namespace ql::detail
