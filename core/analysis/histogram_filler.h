#pragma once
// Fills a Histogram from blocks of values in float lanes (a register's worth), with the same bins as
// Histogram::add (internal to the fast analysis pass, analyzer_fast.h).
//
// Each block comes as float approximations of its values (the value itself, or the value rounded
// once to float) and a function giving the exact double. A bin position found in float arithmetic
// (log bins from exponent bits and a quartic) is trusted only when it lies further from every edge
// than its worst error, bounded for the histogram's own range when the filler is made; every other
// value, and every value of a histogram whose bound is too loose, goes through Histogram::add with
// its exact double. So the counts equal add()'s exactly, whatever the lanes.
#include "analysis/histogram.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace ql {

/// Float and int32 vectors of 4, 8 or 16 lanes (GCC's vector_size cannot depend on a template argument).
template <int Lanes> struct FloatLanes;
template <> struct FloatLanes<4> {
    using F = float __attribute__((vector_size(16)));
    using I = std::int32_t __attribute__((vector_size(16)));
};
template <> struct FloatLanes<8> {
    using F = float __attribute__((vector_size(32)));
    using I = std::int32_t __attribute__((vector_size(32)));
};
template <> struct FloatLanes<16> {
    using F = float __attribute__((vector_size(64)));
    using I = std::int32_t __attribute__((vector_size(64)));
};

class HistogramFiller {
public:
    static constexpr int kBlock = 256; // addBlock takes at most this many values

    explicit HistogramFiller(Histogram& h)
        : m_h(h)
        , m_bins(static_cast<std::int32_t>(h.m_counts.size()))
        , m_log(h.m_scale == Histogram::Scale::Log10)
        , m_a(static_cast<float>(h.m_a))
        , m_b(static_cast<float>(h.m_b))
        , m_tables(4 * static_cast<std::size_t>(m_bins + 2), 0) {
        const double bins = static_cast<double>(m_bins);
        // Worst distance, in bins, between the float position and the exact one; the exact one is
        // itself trusted 1e-6 from an edge (Histogram::BinRule's linear margin).
        double error;
        if (m_log) {
            // log10 from the sextic in float: under 7e-7 (2.2e-6 in log2 on a grid of 4e5 points);
            // the float sums and products of numbers no larger than the ends' logs: 2^-21 of those;
            // the value's own rounding to float: 2^-24 relative, 2.6e-8 in log10.
            const double ends = std::fabs(h.m_a) + std::fabs(h.m_a + h.m_width) + 2.0;
            const double inLog10 = 1e-6 + 0x1p-21 * ends + 3e-8;
            error = h.m_b * inLog10 + 0x1p-22 * bins;
        } else {
            // Rounding of the value (2^-24 relative), of a and b, of the difference and the product.
            const double reach = std::max(std::fabs(h.m_lo), std::fabs(h.m_hi));
            error = 0x1p-23 * (h.m_b * (2 * reach + std::fabs(h.m_a) + h.m_width) + 2 * bins);
        }
        m_margin = static_cast<float>(2 * error + 1e-6);
        m_fast =
            std::isfinite(m_a) && std::isfinite(m_b) && m_b > 0 && m_margin < 0.01f && m_bins < (1 << 20);
    }
    ~HistogramFiller() {
        const auto stride = static_cast<std::size_t>(m_bins + 2);
        for (std::size_t t = 0; t < 4; ++t) {
            for (std::size_t i = 0; i < static_cast<std::size_t>(m_bins); ++i)
                m_h.m_counts[i] += m_tables[t * stride + i];
            m_h.m_under += m_tables[t * stride + static_cast<std::size_t>(m_bins)];
        }
    }
    HistogramFiller(const HistogramFiller&) = delete;
    HistogramFiller& operator=(const HistogramFiller&) = delete;

    /// Counts n <= kBlock values: approx[k] is value k, or value k rounded to float once (a NaN or
    /// infinity takes the exact path); exact(k) gives it as the double Histogram::add bins. Lanes:
    /// the floats of the ISA's widest register (GCC lowers wider vectors lane by lane).
    template <int Lanes, typename Exact>
    [[gnu::always_inline]] void addBlock(const float* approx, int n, Exact exact) {
        if (!m_fast) {
            for (int k = 0; k < n; ++k)
                m_h.add(exact(k));
            return;
        }
        constexpr int kLanes = Lanes;
        using F = typename FloatLanes<Lanes>::F;
        using I = typename FloatLanes<Lanes>::I;
        const float topS = static_cast<float>(m_bins) - m_margin, upperS = 1.0f - m_margin;
        const F a = F{} + m_a, b = F{} + m_b, margin = F{} + m_margin, upper = F{} + upperS, top = F{} + topS;
        const I slow = I{} + (m_bins + 1), under = I{} + m_bins;
        alignas(64) std::int32_t bins[kBlock];
        I anySlow = {};
        int k = 0;
        for (; k + kLanes <= n; k += kLanes) {
            F v;
            std::memcpy(&v, approx + k, sizeof v);
            F p = v;
            I zero = {}, normal = ~I{};
            if (m_log) { // log10 v from the exponent and a sextic in the mantissa, for normal v > 0
                const I u = reinterpret_cast<I>(v);
                F m = reinterpret_cast<F>((u & 0x7FFFFF) | 0x3F800000) - 1.0f; // [0, 1), exact
                m = m *
                    (1.44255317f + m * (-0.718282409f +
                                        m * (0.458273533f +
                                             m * (-0.279544535f + m * (0.123458139f + m * -0.0264599789f)))));
                p = (__builtin_convertvector(((u >> 23) & 0xFF) - 127, F) + m) * 0.301029996f;
                // Float comparisons only: GCC 12 scalarises some integer ones on these vectors.
                zero = v == 0.0f; // underflow, as add() counts v <= 0
                // Negative, subnormal, overflowed or NaN: the exact path.
                normal = (v >= std::numeric_limits<float>::min()) & (v <= std::numeric_limits<float>::max());
            }
            const F t = (p - a) * b;
            const I whole = __builtin_convertvector(t, I); // truncation: the floor wherever frac > 0
            const F frac = t - __builtin_convertvector(whole, F);
            const I fast = normal & (frac > margin) & (frac < upper) & (t < top);
            // Masks are all ones or zero: selects as bit operations (GCC scalarises ?: on these vectors).
            I bin = (whole & fast) | (slow & ~fast);
            bin = (under & zero) | (bin & ~zero);
            anySlow |= ~(fast | zero);
            std::memcpy(bins + k, &bin, sizeof bin);
        }
        for (; k < n; ++k)
            bins[k] = m_bins + 1;
        // Four count tables taken in turn: neighbouring values share a bin, and one table would
        // chain every increment on the one before it.
        const auto stride = static_cast<std::ptrdiff_t>(m_bins + 2);
        std::int64_t* const t0 = m_tables.data();
        std::int64_t *const t1 = t0 + stride, *const t2 = t1 + stride, *const t3 = t2 + stride;
        k = 0;
        for (; k + 4 <= n; k += 4) {
            ++t0[bins[k]];
            ++t1[bins[k + 1]];
            ++t2[bins[k + 2]];
            ++t3[bins[k + 3]];
        }
        for (; k < n; ++k)
            ++t0[bins[k]];
        bool rescan = n % kLanes != 0;
        for (int l = 0; l < kLanes; ++l)
            rescan |= anySlow[l] != 0;
        if (rescan) [[unlikely]]
            for (k = 0; k < n; ++k)
                if (bins[k] == m_bins + 1) m_h.add(exact(k));
    }

private:
    Histogram& m_h;
    std::int32_t m_bins;
    bool m_log;
    float m_a, m_b;
    float m_margin = 0.5f;
    bool m_fast = false;
    // Four tables of bins + 2 counts: the bins, then values counted as underflow, then values
    // taking the exact path (whose counts are dropped: add() counts them).
    std::vector<std::int64_t> m_tables;
};

} // namespace ql
