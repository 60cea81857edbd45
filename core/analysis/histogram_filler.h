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

#include <algorithm>
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
        , m_tables(static_cast<std::size_t>(kTables) * static_cast<std::size_t>(m_bins + 2), 0u) {
        const double bins = static_cast<double>(m_bins);
        // Worst distance, in bins, between the float position and the exact one; the exact one is
        // itself trusted 1e-6 from an edge (Histogram::BinRule's linear margin).
        double error;
        if (m_log) {
            // t = (E + q(m))·B − A with B = b·log10(2), A = a·b: the quintic q is within 1.45e-5 of
            // log2(1 + m) in float (on a grid of 4e5 points); the float sums and products carry 2^-22
            // of magnitudes no larger than L·B, A and the bin count, where L bounds |log2 v| over the
            // range; the value's own rounding to float moves log2 v by 2^-24/ln 2.
            constexpr double kLog10Of2 = 0.30102999566398120;
            const double b2 = h.m_b * kLog10Of2;
            const double reach = (std::fabs(h.m_a) + std::fabs(h.m_a + h.m_width) + 2.0) / kLog10Of2;
            m_a = static_cast<float>(h.m_a * h.m_b);
            m_b = static_cast<float>(b2);
            error = b2 * (1.5e-5 + 1e-7) + 0x1p-22 * (reach * b2 + std::fabs(h.m_a * h.m_b) + bins);
            // Zero and negative values, subnormals, infinities and NaN all fall outside such a range
            // by the exponent alone unless the range reaches near the ends of float's.
            m_checkNormal = !(h.m_lo >= 2.0 * std::numeric_limits<float>::min() && h.m_hi < 0x1p126);
        } else {
            // Rounding of the value (2^-24 relative), of a and b, of the difference and the product.
            const double reach = std::max(std::fabs(h.m_lo), std::fabs(h.m_hi));
            error = 0x1p-23 * (h.m_b * (2 * reach + std::fabs(h.m_a) + h.m_width) + 2 * bins);
        }
        m_margin = static_cast<float>(2 * error + 1e-6);
        m_fast =
            std::isfinite(m_a) && std::isfinite(m_b) && m_b > 0 && m_margin < 0.01f && m_bins < (1 << 20);
    }
    ~HistogramFiller() { flush(); }
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
            F t;
            I zero = {}, normal = ~I{};
            if (m_log) { // log2 v from the exponent and a quintic in the mantissa, for normal v > 0
                const I u = reinterpret_cast<I>(v);
                F m = reinterpret_cast<F>((u & 0x7FFFFF) | 0x3F800000) - 1.0f; // [0, 1), exact
                m = m * (1.44196570f +
                         m * (-0.709664464f + m * (0.417601675f + m * (-0.196277797f + m * 0.0463891774f))));
                // u >> 23 keeps the sign: a negative v gets an exponent far below any range's.
                t = (__builtin_convertvector((u >> 23) - 127, F) + m) * b - a;
                // Float comparisons only: GCC 12 scalarises some integer ones on these vectors.
                zero = v == 0.0f;  // underflow, as add() counts v <= 0
                if (m_checkNormal) // negative, subnormal, overflowed or NaN: the exact path
                    normal =
                        (v >= std::numeric_limits<float>::min()) & (v <= std::numeric_limits<float>::max());
            } else {
                t = (v - a) * b;
            }
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
        for (int pad = k; pad % kLanes != 0; ++pad) // whole vectors for the rescan below, not counted
            bins[pad] = m_bins;
        // kTables count tables taken in turn: neighbouring values often share a bin (most of a log
        // histogram's are in its top few), and fewer tables would chain increments on each other.
        const auto stride = static_cast<std::ptrdiff_t>(m_bins) + 2;
        if (m_pending > kFlushAt) flush();
        m_pending += n;
        std::uint32_t* const tables = m_tables.data();
        k = 0;
        for (; k + kTables <= n; k += kTables)
            for (int t = 0; t < kTables; ++t)
                ++tables[t * stride + static_cast<std::uint32_t>(bins[k + t])];
        for (; k < n; ++k)
            ++tables[static_cast<std::uint32_t>(bins[k])];
        bool rescan = n % kLanes != 0;
        for (int l = 0; l < kLanes; ++l)
            rescan |= anySlow[l] != 0;
        if (rescan) [[unlikely]] // a vector at a time: most hold no value for the exact path
            for (k = 0; k < n; k += kLanes) {
                I v;
                std::memcpy(&v, bins + k, sizeof v);
                const I hit = __builtin_convertvector(v, F) == static_cast<float>(m_bins + 1);
                std::uint64_t words[sizeof hit / 8];
                std::memcpy(words, &hit, sizeof hit);
                std::uint64_t any = 0;
                for (std::uint64_t w : words)
                    any |= w;
                if (any)
                    for (int j = k; j < k + kLanes && j < n; ++j)
                        if (bins[j] == m_bins + 1) m_h.add(exact(j));
            }
    }

private:
    Histogram& m_h;
    std::int32_t m_bins;
    bool m_log;
    float m_a, m_b; // position t = (v − a)·b; log bins: t = log2(v)·b − a
    bool m_checkNormal = false;
    float m_margin = 0.5f;
    bool m_fast = false;
    static constexpr int kTables = 8;
    // kTables tables of bins + 2 counts: the bins, then values counted as underflow, then values
    // taking the exact path (whose counts are dropped: add() counts them).
    std::vector<std::uint32_t> m_tables;
    std::int64_t m_pending = 0; // values counted in the tables since they were last added up
    // 32-bit counts (half the cache of 64-bit ones), added to the histogram before any could wrap.
    static constexpr std::int64_t kFlushAt = (std::int64_t{1} << 31) - kBlock;

    void flush() {
        const auto stride = static_cast<std::size_t>(m_bins) + 2;
        for (std::size_t t = 0; t < static_cast<std::size_t>(kTables); ++t) {
            for (std::size_t i = 0; i < static_cast<std::size_t>(m_bins); ++i)
                m_h.m_counts[i] += m_tables[t * stride + i];
            m_h.m_under += m_tables[t * stride + static_cast<std::size_t>(m_bins)];
        }
        std::fill(m_tables.begin(), m_tables.end(), 0u);
        m_pending = 0;
    }
};

} // namespace ql
