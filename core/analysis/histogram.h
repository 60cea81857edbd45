#pragma once
// Fixed-edge histograms. Two histograms with the same edges merge by adding counts, so chunks
// (or threads) can each fill their own and combine.
//
// Bins are found with a multiply and at most a couple of comparisons, never a log per value:
// linear bins compare against numpy.histogram's edges (start + i * step); log bins compare the
// value itself against the bin edges in value units (10^t, computed once), starting from the bin
// that the value's exponent bits suggest. A value on an edge goes to the bin above it; the top
// edge is closed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ql {

class Histogram {
public:
    enum class Scale : std::uint8_t {
        Linear, // equal-width bins over [lo, hi]
        Log10,  // equal-width bins of log10(v) over [lo, hi] (lo > 0); v <= 0 counts as underflow
    };

    /// How a value in [lo, hi] finds its bin.
    struct BinRule {
        double a, b, step; // bin position = (t - a) * b, t = v or log10(v); linear edge i = a + i * step
        std::int64_t last;
        bool log;
        const double* edgeV; // Log10: the edges in value units

        double margin; // bin positions nearer than this to a whole number are checked exactly

        [[gnu::always_inline]] std::int64_t binOf(double v) const {
            // The position (v - a) * b, or its approximation from exponent bits for log bins. Away
            // from every edge by more than its error, its whole part is the bin; near an edge the
            // value is compared with the edges themselves.
            const double t = ((log ? approxLog10(v) : v) - a) * b;
            if (t > 0.0 && t < static_cast<double>(last + 1)) {
                const auto whole = static_cast<std::int64_t>(t);
                const double frac = t - static_cast<double>(whole);
                if (frac > margin && frac < 1.0 - margin) [[likely]]
                    return whole;
            }
            return nearEdge(v, std::clamp<std::int64_t>(static_cast<std::int64_t>(t), 0, last));
        }
        std::int64_t nearEdge(double v, std::int64_t bin) const {
            if (!log) {
                // numpy.histogram's edge correction, so a value on an edge lands where numpy puts it
                // (edges as numpy.linspace makes them: start + i * step).
                if (bin > 0 && v < static_cast<double>(bin) * step + a)
                    --bin;
                else if (bin < last && v >= static_cast<double>(bin + 1) * step + a)
                    ++bin;
                return bin;
            }
            while (bin > 0 && v < edgeV[bin])
                --bin;
            while (bin < last && v >= edgeV[bin + 1])
                ++bin;
            return bin;
        }
        /// How far, in bins, approxLog10 (6e-5 at most) or rounding can move a bin position.
        static double marginFor(bool log, double binsPerUnit) {
            return log ? std::min(0.5, 1e-4 * binsPerUnit) : 1e-6;
        }
        /// m in [0, 1) becomes log2(1 + m) to within 2e-4 (a least-squares quartic): close enough
        /// that few values need the exact comparisons. In place: a vector return would change the ABI.
        template <typename T> [[gnu::always_inline]] static void toLog2OnePlus(T& m) {
            m = m * (1.438548215131838 +
                     m * (-0.6780914507552203 + m * (0.32365029732409123 + m * -0.08429704958969148)));
        }
        // log10 of a positive normal double to within 6e-5 (exponent bits plus log2OnePlus of the
        // mantissa): only a starting bin, corrected by exact comparisons.
        static double approxLog10(double v) {
            std::uint64_t u;
            std::memcpy(&u, &v, 8);
            const double e = static_cast<double>(static_cast<std::int64_t>((u >> 52) & 0x7FF) - 1023);
            double m = static_cast<double>(u & ((std::uint64_t{1} << 52) - 1)) * 0x1p-52; // [0, 1)
            toLog2OnePlus(m);
            return (e + m) * 0.30102999566398120;
        }
    };

    Histogram() = default;
    /// `bins` >= 1. A degenerate range (lo == hi) gets a unit width around lo.
    Histogram(double lo, double hi, int bins, Scale scale = Scale::Linear);

    [[gnu::always_inline]] void add(double v, std::int64_t n = 1) {
        if (v >= m_lo && v <= m_hi) [[likely]] { // Log10: lo > 0, so v <= 0 is underflow
            m_counts[static_cast<std::size_t>(rule().binOf(v))] += n;
            return;
        }
        if (std::isnan(v))
            m_nan += n;
        else if (v < m_lo)
            m_under += n;
        else
            m_over += n;
    }

    /// Adds many values with the histogram's constants held in locals (inner loops, where the
    /// compiler cannot keep members in registers across the count stores); the same bins as add().
    /// The out-of-range counts are written back when it is destroyed.
    class Filler {
    public:
        explicit Filler(Histogram& h)
            : m_h(h)
            , m_lo(h.m_lo)
            , m_hi(h.m_hi)
            , m_rule(h.rule())
            , m_counts(h.m_counts.data())
            , m_lanes(4 * h.m_counts.size(), 0) {}
        ~Filler() {
            m_h.m_nan += m_nan;
            m_h.m_under += m_under;
            m_h.m_over += m_over;
            const std::size_t bins = m_h.m_counts.size();
            for (std::size_t i = 0; i < m_lanes.size(); ++i)
                m_counts[i % bins] += m_lanes[i];
        }
        Filler(const Filler&) = delete;
        Filler& operator=(const Filler&) = delete;
        [[gnu::always_inline]] void add(double v) {
            if (v >= m_lo && v <= m_hi) [[likely]] {
                ++m_counts[m_rule.binOf(v)];
                return;
            }
            if (std::isnan(v))
                ++m_nan;
            else if (v < m_lo)
                ++m_under;
            else
                ++m_over;
        }

        /// add() for v[0..n), n <= kBlock: bins are found four at a time (the same position,
        /// whole part and margins as binOf; log bins from the same exponent-bit approximation)
        /// and only values near an edge or out of range take add().
        static constexpr int kBlock = 256;
        static constexpr std::int64_t kMagic = 0x4330000000000000; // the bits of 2^52
        static constexpr std::int64_t kMantissa = (std::int64_t{1} << 52) - 1;
        [[gnu::always_inline]] void addBlock(const double* v, int n) { // inlined into each ISA's pass
            using D4 = double __attribute__((vector_size(32)));
            using I4 = std::int64_t __attribute__((vector_size(32)));
            using W4 = std::int32_t __attribute__((vector_size(16)));
            const double topS = static_cast<double>(m_rule.last + 1), upperS = 1.0 - m_rule.margin;
            const D4 zero = {}, lo = {m_lo, m_lo, m_lo, m_lo}, hi = {m_hi, m_hi, m_hi, m_hi};
            const D4 a = {m_rule.a, m_rule.a, m_rule.a, m_rule.a},
                     b = {m_rule.b, m_rule.b, m_rule.b, m_rule.b};
            const D4 top = {topS, topS, topS, topS}, upper = {upperS, upperS, upperS, upperS};
            const D4 margin = {m_rule.margin, m_rule.margin, m_rule.margin, m_rule.margin};
            alignas(16) std::int32_t bins[kBlock];
            int k = 0;
            for (; k + 4 <= n; k += 4) {
                D4 x;
                std::memcpy(&x, v + k, sizeof x);
                D4 p = x;
                if (m_rule.log) { // approxLog10, its integer parts made exact doubles by the 2^52 trick
                    const I4 u = reinterpret_cast<I4>(x), magic = {kMagic, kMagic, kMagic, kMagic};
                    const I4 expBits = ((u >> 52) & 0x7FF) | magic, manBits = (u & kMantissa) | magic;
                    const D4 e = (reinterpret_cast<D4>(expBits) - 0x1p52) - 1023.0;
                    D4 m = (reinterpret_cast<D4>(manBits) - 0x1p52) * 0x1p-52;
                    BinRule::toLog2OnePlus(m);
                    p = (e + m) * 0.30102999566398120;
                }
                const D4 t = (p - a) * b;
                const D4 tc = t > zero ? (t < top ? t : top) : zero; // in int range before converting
                const D4 whole = __builtin_convertvector(__builtin_convertvector(tc, W4), D4);
                const D4 frac = t - whole;
                const I4 fast =
                    (x >= lo) & (x <= hi) & (t > zero) & (t < top) & (frac > margin) & (frac < upper);
                // Chosen among doubles, converted once: narrowing the 64-bit mask costs shuffles.
                const W4 bin = __builtin_convertvector(fast ? whole : D4{-1.0, -1.0, -1.0, -1.0}, W4);
                std::memcpy(bins + k, &bin, sizeof bin);
            }
            for (; k < n; ++k)
                bins[k] = -1;
            // Four count tables taken in turn: neighbouring values share a bin, and one table
            // would chain every increment on the one before it.
            const auto stride = static_cast<std::ptrdiff_t>(m_lanes.size() / 4);
            std::int64_t* const lanes[4] = {m_lanes.data(), m_lanes.data() + stride,
                                            m_lanes.data() + 2 * stride, m_lanes.data() + 3 * stride};
            auto count = [&](int j, std::int64_t* table) __attribute__((always_inline)) {
                if (bins[j] >= 0) [[likely]]
                    ++table[bins[j]];
                else
                    add(v[j]);
            };
            for (k = 0; k + 4 <= n; k += 4)
                for (int t = 0; t < 4; ++t)
                    count(k + t, lanes[t]);
            for (; k < n; ++k)
                count(k, lanes[0]);
        }

    private:
        Histogram& m_h;
        double m_lo, m_hi;
        BinRule m_rule;
        std::int64_t* m_counts;
        std::vector<std::int64_t> m_lanes; // addBlock's four tables, added to the counts at the end
        std::int64_t m_nan = 0, m_under = 0, m_over = 0;
    };

    /// Throws QuantError when the edges differ.
    void merge(const Histogram& other);

    double lo() const { return m_lo; }
    double hi() const { return m_hi; }
    Scale scale() const { return m_scale; }
    int binCount() const { return static_cast<int>(m_counts.size()); }
    /// bins + 1 edges, in value units (powers of ten for Log10).
    std::vector<double> edges() const;
    const std::vector<std::int64_t>& counts() const { return m_counts; }
    std::int64_t underflow() const { return m_under; } // below lo (and v <= 0 for Log10)
    std::int64_t overflow() const { return m_over; }   // above hi
    std::int64_t nanCount() const { return m_nan; }
    std::int64_t total() const;

private:
    BinRule rule() const {
        const bool log = m_scale == Scale::Log10;
        return {m_a,
                m_b,
                m_step,
                static_cast<std::int64_t>(m_counts.size()) - 1,
                log,
                m_edgeV.data(),
                BinRule::marginFor(log, m_b)};
    }

    double m_lo = 0;
    double m_hi = 1;
    Scale m_scale = Scale::Linear;
    double m_a = 0; // bin position = (t - m_a) * m_b, t = v or log10(v)
    double m_b = 1;
    double m_width = 1;
    double m_step = 1;           // m_width / bins, as numpy.linspace computes it
    std::vector<double> m_edgeV; // Log10: the bins' edges in value units
    std::vector<std::int64_t> m_counts;
    std::int64_t m_under = 0;
    std::int64_t m_over = 0;
    std::int64_t m_nan = 0;
};

/// Linear histogram of the finite values over their own [min, max] (NaN counted apart).
Histogram valueHistogram(std::span<const float> values, int bins);

} // namespace ql
