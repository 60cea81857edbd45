#pragma once
// Fixed-edge histograms. Two histograms with the same edges merge by adding counts, so chunks
// (or threads) can each fill their own and combine. How a value finds its bin: bin_rule.h.
#include "analysis/bin_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ql {

class Histogram {
public:
    using Scale = BinScale; // Linear, Log10 or Octaves (bin_rule.h)

    using BinRule = ql::BinRule;

    Histogram() = default;
    /// `bins` >= 1; Linear or Log10 (octave bins: octaves()). A degenerate range (lo == hi) gets a
    /// unit width around lo.
    Histogram(double lo, double hi, int bins, Scale scale = Scale::Linear);
    /// Octave bins over [2^lowExponent, 2^(lowExponent + octaves)], perOctave equal-width bins in
    /// each octave (v below lo counts as underflow). Throws QuantError unless both ends are normal
    /// doubles, octaves >= 1 and perOctave is a power of two up to BinRule::kMostPerOctave (so every
    /// edge is a double, and a value on one goes to the bin above it).
    static Histogram octaves(int lowExponent, int octaves, int perOctave);
    /// The octave bins with these ends and count (read back from their edges), if they are such:
    /// both ends powers of two and the bins an even share of the octaves between them.
    static std::optional<Histogram> octavesOver(double lo, double hi, int bins);
    /// Linear bins of width 2^widthExponent with lo = firstEdge * 2^(widthExponent - 1) (an integer
    /// count of half widths): each bin follows from the bits of a value with no rounding. Throws
    /// QuantError when the edges are not finite doubles.
    static Histogram alignedLinear(std::int64_t firstEdge, int widthExponent, int bins);

    [[gnu::always_inline]] void add(double v, std::int64_t n = 1) {
        const std::int64_t slot = placement().slotOf(v);
        if (slot >= 0) [[likely]] {
            m_counts[static_cast<std::size_t>(slot)] += n;
            return;
        }
        (slot == BinPlacement::kNan ? m_nan : slot == BinPlacement::kUnder ? m_under : m_over) += n;
    }

    /// Throws QuantError when the edges differ.
    void merge(const Histogram& other);
    /// Where add() puts a value, for a pass that counts elsewhere (a device's kernel); valid while
    /// this histogram lives (Log10 edges are read from it).
    BinPlacement placement() const { return {rule(), m_lo, m_hi}; }
    /// Adds counts made elsewhere by placement(): one per bin, then those below, above and NaN.
    /// Throws QuantError when `bins` is not binCount() long.
    void addCounts(std::span<const std::int64_t> bins, std::int64_t under, std::int64_t over,
                   std::int64_t nan);

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
        return {m_a,
                m_b,
                m_step,
                static_cast<std::int64_t>(m_counts.size()) - 1,
                m_scale,
                m_edgeV.data(),
                BinRule::marginFor(m_scale == Scale::Log10, m_b),
                m_lowExponent,
                m_perOctave};
    }

    double m_lo = 0;
    double m_hi = 1;
    Scale m_scale = Scale::Linear;
    double m_a = 0; // bin position = (t - m_a) * m_b, t = v or log10(v)
    double m_b = 1;
    double m_width = 1;
    double m_step = 1;                               // m_width / bins, as numpy.linspace computes it
    std::vector<double> m_edgeV;                     // Log10: the bins' edges in value units
    std::int32_t m_lowExponent = 0, m_perOctave = 1; // Octaves: lo = 2^m_lowExponent
    std::vector<std::int64_t> m_counts;
    std::int64_t m_under = 0;
    std::int64_t m_over = 0;
    std::int64_t m_nan = 0;
};

/// A scale's name in reports ("linear", "log10", "octaves"), and the scale of a name (false if none).
const char* scaleName(Histogram::Scale scale);
bool scaleNamed(const std::string& name, Histogram::Scale& scale);

/// Linear histogram of the finite values over their own [min, max] (NaN counted apart).
Histogram valueHistogram(std::span<const float> values, int bins);

} // namespace ql
