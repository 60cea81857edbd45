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

    Histogram() = default;
    /// `bins` >= 1. A degenerate range (lo == hi) gets a unit width around lo.
    Histogram(double lo, double hi, int bins, Scale scale = Scale::Linear);

    void add(double v, std::int64_t n = 1) {
        if (v >= m_lo && v <= m_hi) [[likely]] { // Log10: lo > 0, so v <= 0 is underflow
            m_counts[static_cast<std::size_t>(binOf(v))] += n;
            return;
        }
        if (std::isnan(v)) m_nan += n;
        else if (v < m_lo) m_under += n;
        else m_over += n;
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
    // The bin of v in [lo, hi] (v > 0 for Log10).
    std::int64_t binOf(double v) const {
        const auto last = static_cast<std::int64_t>(m_counts.size()) - 1;
        if (m_scale == Scale::Linear) {
            auto bin = std::clamp<std::int64_t>(static_cast<std::int64_t>((v - m_a) * m_b), 0, last);
            // numpy.histogram's edge correction, so a value on an edge lands where numpy puts it.
            if (bin > 0 && v < edgeT(bin)) --bin;
            else if (bin < last && v >= edgeT(bin + 1)) ++bin;
            return bin;
        }
        auto bin = std::clamp<std::int64_t>(static_cast<std::int64_t>((approxLog10(v) - m_a) * m_b), 0, last);
        while (bin > 0 && v < m_edgeV[static_cast<std::size_t>(bin)]) --bin;
        while (bin < last && v >= m_edgeV[static_cast<std::size_t>(bin + 1)]) ++bin;
        return bin;
    }
    double edgeT(std::int64_t i) const {
        // numpy.linspace: start + i * step, step = (stop - start) / bins
        return static_cast<double>(i) * (m_width / static_cast<double>(m_counts.size())) + m_a;
    }
    // log10 of a positive normal double to within ~0.01 (exponent bits plus a linear mantissa):
    // only a starting bin, corrected by exact comparisons.
    static double approxLog10(double v) {
        std::uint64_t u;
        std::memcpy(&u, &v, 8);
        const double e = static_cast<double>(static_cast<std::int64_t>((u >> 52) & 0x7FF) - 1023);
        const double m = static_cast<double>(u & ((std::uint64_t{1} << 52) - 1)) * 0x1p-52; // [0, 1)
        return (e + m * (1.0 + 0.34 * (1.0 - m))) * 0.30102999566398120;
    }

    double m_lo = 0;
    double m_hi = 1;
    Scale m_scale = Scale::Linear;
    double m_a = 0; // bin position = (t - m_a) * m_b, t = v or log10(v)
    double m_b = 1;
    double m_width = 1;
    std::vector<double> m_edgeV; // Log10: the bins' edges in value units
    std::vector<std::int64_t> m_counts;
    std::int64_t m_under = 0;
    std::int64_t m_over = 0;
    std::int64_t m_nan = 0;
};

/// Linear histogram of the finite values over their own [min, max] (NaN counted apart).
Histogram valueHistogram(std::span<const float> values, int bins);

} // namespace ql
