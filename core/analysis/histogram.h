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
        /// log2(1 + m) for m in [0, 1), to within 2e-4 (a least-squares quartic): close enough that
        /// few values need the exact comparisons.
        static double log2OnePlus(double m) {
            return m * (1.438548215131838 +
                        m * (-0.6780914507552203 + m * (0.32365029732409123 + m * -0.08429704958969148)));
        }
        // log10 of a positive normal double to within 6e-5 (exponent bits plus log2OnePlus of the
        // mantissa): only a starting bin, corrected by exact comparisons.
        static double approxLog10(double v) {
            std::uint64_t u;
            std::memcpy(&u, &v, 8);
            const double e = static_cast<double>(static_cast<std::int64_t>((u >> 52) & 0x7FF) - 1023);
            const double m = static_cast<double>(u & ((std::uint64_t{1} << 52) - 1)) * 0x1p-52; // [0, 1)
            return (e + log2OnePlus(m)) * 0.30102999566398120;
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
    friend class HistogramFiller; // the fast pass's block filler (histogram_filler.h)

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
