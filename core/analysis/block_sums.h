#pragma once
// The first pass's sums over one group's elements, a block at a time in four double lanes (GCC
// vector types: strict IEEE arithmetic, so the compiler may not reorder a scalar sum for us, but
// the lanes are ours to order). Only blocks whose x and x̂ are all finite come here; the lanes are
// added in lane order at the end of the segment, so the result is a function of the data alone.
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

class GroupBlockSums {
public:
    GroupBlockSums(const ClipEdges& e, bool floatTarget)
        : m_lowT(e.low - e.roundingSlack)
        , m_highT(e.high + e.roundingSlack)
        , m_float(floatTarget) {}

    /// `n` finite elements x[k], xh[k] with flat indices first + k, in index order after any earlier block.
    /// Always inlined: the analysis pass is built per ISA (analyzer_fast.h) and this is its body.
    [[gnu::always_inline]] void addBlock(const float* x, const float* xh, int n, std::int64_t first) {
        constexpr double kInf = std::numeric_limits<double>::infinity();
        const D4 lowT = {m_lowT, m_lowT, m_lowT, m_lowT}, highT = {m_highT, m_highT, m_highT, m_highT};
        const D4 t1 = {1e-3, 1e-3, 1e-3, 1e-3}, t5 = {5e-3, 5e-3, 5e-3, 5e-3}, zero = {};
        const D4 inf = {kInf, kInf, kInf, kInf};
        const I4 absMask = {0x7FFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF};
        const I4 ftzOn = m_float ? I4{-1, -1, -1, -1} : I4{};
        D4 blockMax = zero, xMin = inf, xMax = -inf;
        // Each lane's first index of its largest |error| (its first element while that is 0), so the
        // block's worst is found without a search loop that mispredicts once per block.
        I4 maxAt = {0, 1, 2, 3};
        const I4 step = {4, 4, 4, 4};
        I4 at = maxAt;
        int k = 0;
        for (; k + 4 <= n; k += 4, at += step) {
            F4 xf, hf;
            std::memcpy(&xf, x + k, sizeof xf);
            std::memcpy(&hf, xh + k, sizeof hf);
            const D4 xv = __builtin_convertvector(xf, D4), hv = __builtin_convertvector(hf, D4);
            const D4 e = xv - hv;
            const D4 ae = reinterpret_cast<D4>(reinterpret_cast<I4>(e) & absMask);
            const D4 ax = reinterpret_cast<D4>(reinterpret_cast<I4>(xv) & absMask);
            const D4 e2 = e * e;
            m_sqX += xv * xv;
            m_sqXh += hv * hv;
            m_dot += xv * hv;
            m_sqErr += e2;
            m_absErr += ae;
            const I4 larger = ae > blockMax;
            blockMax = larger ? ae : blockMax;
            maxAt = larger ? at : maxAt;
            // exceeds(): with |x| = 0 the threshold is 0, so ae > t·|x| is ae ≠ 0 as it should be.
            m_over1 -= ae > t1 * ax;
            m_over5 -= ae > t5 * ax;
            const I4 low = xv<lowT, high = xv> highT;
            m_low -= low;
            m_high -= high;
            m_clipSq += (low | high) ? e2 : zero;
            m_roundSq += (low | high) ? zero : e2;
            m_ftz -= ftzOn & (xv != zero) & (hv == zero);
            xMin = xv < xMin ? xv : xMin;
            xMax = xv > xMax ? xv : xMax;
            m_minNz = (ae > zero) & (ae < m_minNz) ? ae : m_minNz;
        }
        // The tail, element by element into lane 0 with the same operations.
        for (; k < n; ++k) {
            const double xv = x[k], hv = xh[k], e = xv - hv, ae = std::fabs(e), e2 = e * e;
            m_sqX[0] += xv * xv;
            m_sqXh[0] += hv * hv;
            m_dot[0] += xv * hv;
            m_sqErr[0] += e2;
            m_absErr[0] += ae;
            if (ae > blockMax[0]) blockMax[0] = ae, maxAt[0] = k;
            m_over1[0] += ae > 1e-3 * std::fabs(xv);
            m_over5[0] += ae > 5e-3 * std::fabs(xv);
            const bool low = xv<m_lowT, high = xv> m_highT;
            m_low[0] += low;
            m_high[0] += high;
            (low || high ? m_clipSq[0] : m_roundSq[0]) += e2;
            m_ftz[0] += m_float && xv != 0.0 && hv == 0.0;
            xMin[0] = xv < xMin[0] ? xv : xMin[0];
            xMax[0] = xv > xMax[0] ? xv : xMax[0];
            if (ae > 0 && ae < m_minNz[0]) m_minNz[0] = ae;
        }
        m_count += n;
        // Worst element: the first of the block's largest, unless an earlier block's was as large.
        const double bm = std::max(std::max(blockMax[0], blockMax[1]), std::max(blockMax[2], blockMax[3]));
        if (m_worst < 0 || bm > m_maxAbs) {
            std::int64_t w = n;
            for (int l = 0; l < 4; ++l)
                w = blockMax[l] == bm ? std::min<std::int64_t>(w, maxAt[l]) : w;
            m_maxAbs = bm;
            m_worst = first + w;
        }
        double lo = std::min(std::min(xMin[0], xMin[1]), std::min(xMin[2], xMin[3]));
        double hi = std::max(std::max(xMax[0], xMax[1]), std::max(xMax[2], xMax[3]));
        if (lo == 0.0 || hi == 0.0) { // ±0: keep the sign of the first zero, as a running std::min does
            lo = kInf, hi = -kInf;
            for (int j = 0; j < n; ++j)
                lo = std::min<double>(lo, x[j]), hi = std::max<double>(hi, x[j]);
        }
        m_xMin = std::min(m_xMin, lo);
        m_xMax = std::max(m_xMax, hi);
    }

    /// The segment's sums into its error statistics, clipping sums and ranges (ranges as x min,
    /// x max and the smallest non-zero |error|).
    [[gnu::always_inline]] void finish(ErrorStats& stats, GroupClipping& clip, double& xMin, double& xMax,
                                       double& minNonZero) const {
        if (m_count == 0) return;
        auto sum = [](const D4& v) { return ((v[0] + v[1]) + v[2]) + v[3]; };
        auto count = [](const I4& v) { return ((v[0] + v[1]) + v[2]) + v[3]; };
        ErrorStats::Sums s;
        s.count = s.finite = m_count;
        s.over1e3 = count(m_over1);
        s.over5e3 = count(m_over5);
        s.worstIndex = m_worst;
        s.sumSqX = sum(m_sqX);
        s.sumSqXhat = sum(m_sqXh);
        s.sumDot = sum(m_dot);
        s.sumSqErr = sum(m_sqErr);
        s.sumAbsErr = sum(m_absErr);
        s.maxAbsErr = m_maxAbs;
        stats.merge(ErrorStats::fromSums(s));
        GroupClipping c;
        c.count = m_count;
        c.clippedLow = count(m_low);
        c.clippedHigh = count(m_high);
        c.flushedToZero = count(m_ftz);
        c.clipErrorSq = sum(m_clipSq);
        c.roundErrorSq = sum(m_roundSq);
        c.sumSqX = s.sumSqX;
        c.maxAbsError = m_maxAbs;
        clip.merge(c);
        xMin = std::min(xMin, m_xMin);
        xMax = std::max(xMax, m_xMax);
        minNonZero = std::min(minNonZero,
                              std::min(std::min(m_minNz[0], m_minNz[1]), std::min(m_minNz[2], m_minNz[3])));
    }

private:
    double m_lowT, m_highT;
    bool m_float;
    D4 m_sqX{}, m_sqXh{}, m_dot{}, m_sqErr{}, m_absErr{}, m_clipSq{}, m_roundSq{};
    D4 m_minNz = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                  std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    I4 m_over1{}, m_over5{}, m_low{}, m_high{}, m_ftz{};
    std::int64_t m_count = 0, m_worst = -1;
    double m_maxAbs = 0;
    double m_xMin = std::numeric_limits<double>::infinity(),
           m_xMax = -std::numeric_limits<double>::infinity();
};

} // namespace ql::detail
