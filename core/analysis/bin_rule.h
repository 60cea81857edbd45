#pragma once
// How a value finds its bin in a fixed-edge histogram (Histogram, histogram.h). Linear bins: a
// multiply and at most a couple of comparisons against numpy.histogram's edges (start + i * step).
// Log10 bins (read from reports of format 2): the value against the bin edges in value units (10^t,
// computed once), starting from the bin its exponent bits suggest. Octave bins: from the value's bits
// alone, its exponent and the top of its mantissa, with no arithmetic that rounds. A value on an edge
// goes to the bin above it; the top edge is closed.
//
// Plain IEEE double arithmetic and integer bit work only, so the CUDA backend's statistics kernels
// place every value in the same bin as the host (built without FMA contraction on both sides).
#include "base/host_device.h"

#include <cstdint>
#include <cstring>

namespace ql {

/// How a histogram's edges are laid out (Histogram::Scale, and the rule's own copy).
enum class BinScale : std::uint8_t {
    Linear,  // equal-width bins over [lo, hi]
    Log10,   // equal-width bins of log10(v) over [lo, hi] (lo > 0); v <= 0 counts as underflow
    Octaves, // lo and hi powers of two, each octave [2^e, 2^(e+1)) cut into equal-width bins
};

struct BinRule {
    double a, b, step; // bin position = (t - a) * b, t = v or log10(v); linear edge i = a + i * step
    std::int64_t last;
    BinScale scale;
    const double* edgeV; // Log10: the edges in value units (bins + 1 of them)
    double margin;       // bin positions nearer than this to a whole number are checked exactly
    std::int32_t lowExponent = 0, perOctave = 1; // Octaves: lo = 2^lowExponent, bins per octave

    /// The bin of v, for v in [lo, hi] of its histogram.
    QL_HOST_DEVICE QL_FORCE_INLINE std::int64_t binOf(double v) const {
        if (scale == BinScale::Octaves) return octaveBinOf(v);
        const bool log = scale == BinScale::Log10;
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
        return nearPosition(v, t);
    }
    /// The bin of v in [lo, hi] from its position t, however near an edge: the bin t falls in
    /// (clamped to [0, last] before the conversion: t may lie far out, or be NaN), corrected by
    /// comparing v with its edges.
    QL_HOST_DEVICE QL_FORCE_INLINE std::int64_t nearPosition(double v, double t) const {
        const double top = static_cast<double>(last);
        return nearEdge(v, static_cast<std::int64_t>(t > 0.0 ? (t < top ? t : top) : 0.0));
    }
    /// Octave bins from the bits of v (a normal double in [lo, hi]): the octave from its exponent,
    /// the bin within it from the top of its mantissa, floor(perOctave * mantissa fraction) in
    /// integers; hi itself, the closed top edge, in the last bin.
    QL_HOST_DEVICE QL_FORCE_INLINE std::int64_t octaveBinOf(double v) const {
        const std::uint64_t u = bitsOf(v);
        const auto octave = static_cast<std::int64_t>((u >> 52) & 0x7FF) - 1023 - lowExponent;
        const auto within =
            static_cast<std::int64_t>(((u & kMantissa) * static_cast<std::uint64_t>(perOctave)) >> 52);
        const std::int64_t bin = octave * perOctave + within;
        return bin < last ? bin : last;
    }
    /// The most bins an octave may have: the mantissa times it must stay within 64 bits.
    static constexpr std::int32_t kMostPerOctave = 2048;
    QL_HOST_DEVICE std::int64_t nearEdge(double v, std::int64_t bin) const {
        if (scale == BinScale::Linear) {
            // numpy.histogram's edge correction, so a value on an edge lands where numpy puts it
            // (edges as numpy.linspace makes them: start + i * step). Without branches: near an edge,
            // which way a value goes is a coin toss. (After a step down, the step up never applies.)
            bin -= static_cast<std::int64_t>(bin > 0 && v < static_cast<double>(bin) * step + a);
            bin += static_cast<std::int64_t>(bin < last && v >= static_cast<double>(bin + 1) * step + a);
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
        const double logMargin = 1e-4 * binsPerUnit;
        return log ? (logMargin < 0.5 ? logMargin : 0.5) : 1e-6;
    }
    /// log2(1 + m) for m in [0, 1), to within 2e-4 (a least-squares quartic): close enough that
    /// few values need the exact comparisons.
    QL_HOST_DEVICE static double log2OnePlus(double m) {
        return m * (1.438548215131838 +
                    m * (-0.6780914507552203 + m * (0.32365029732409123 + m * -0.08429704958969148)));
    }
    // log10 of a positive normal double to within 6e-5 (exponent bits plus log2OnePlus of the
    // mantissa): only a starting bin, corrected by exact comparisons.
    QL_HOST_DEVICE static double approxLog10(double v) {
        const std::uint64_t u = bitsOf(v);
        const double e = static_cast<double>(static_cast<std::int64_t>((u >> 52) & 0x7FF) - 1023);
        const double m = static_cast<double>(u & kMantissa) * 0x1p-52; // [0, 1)
        return (e + log2OnePlus(m)) * 0.30102999566398120;
    }
    static constexpr std::uint64_t kMantissa = (std::uint64_t{1} << 52) - 1;
    QL_HOST_DEVICE QL_FORCE_INLINE static std::uint64_t bitsOf(double v) {
#if defined(__CUDA_ARCH__)
        return static_cast<std::uint64_t>(__double_as_longlong(v));
#else
        std::uint64_t u;
        std::memcpy(&u, &v, 8);
        return u;
#endif
    }
};

/// Where Histogram::add puts a value: a bin, or one of the three counts beside the bins.
struct BinPlacement {
    BinRule rule;
    double lo, hi;

    static constexpr std::int64_t kUnder = -1; // below lo (and v <= 0 for Log10: lo > 0)
    static constexpr std::int64_t kOver = -2;  // above hi
    static constexpr std::int64_t kNan = -3;

    QL_HOST_DEVICE QL_FORCE_INLINE std::int64_t slotOf(double v) const {
        if (v >= lo && v <= hi) [[likely]]
            return rule.binOf(v);
        if (v != v) return kNan;
        return v < lo ? kUnder : kOver;
    }
};

} // namespace ql
