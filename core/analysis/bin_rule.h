#pragma once
// How a value finds its bin in a fixed-edge histogram (Histogram, histogram.h): a multiply and at most
// a couple of comparisons, never a log per value. Linear bins compare against numpy.histogram's edges
// (start + i * step); log bins compare the value itself against the bin edges in value units (10^t,
// computed once), starting from the bin that the value's exponent bits suggest. A value on an edge
// goes to the bin above it; the top edge is closed.
//
// Plain IEEE double arithmetic and integer bit work only, so the CUDA backend's statistics kernels
// place every value in the same bin as the host (built without FMA contraction on both sides).
#include "base/host_device.h"

#include <cstdint>
#include <cstring>

namespace ql {

struct BinRule {
    double a, b, step; // bin position = (t - a) * b, t = v or log10(v); linear edge i = a + i * step
    std::int64_t last;
    bool log;
    const double* edgeV; // Log10: the edges in value units (bins + 1 of them)
    double margin;       // bin positions nearer than this to a whole number are checked exactly

    /// The bin of v, for v in [lo, hi] of its histogram.
    QL_HOST_DEVICE QL_FORCE_INLINE std::int64_t binOf(double v) const {
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
        // Clamped to [0, last] before the conversion (t may lie far out, or be NaN).
        const double top = static_cast<double>(last);
        return nearEdge(v, static_cast<std::int64_t>(t > 0.0 ? (t < top ? t : top) : 0.0));
    }
    QL_HOST_DEVICE std::int64_t nearEdge(double v, std::int64_t bin) const {
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
#if defined(__CUDA_ARCH__)
        const auto u = static_cast<std::uint64_t>(__double_as_longlong(v));
#else
        std::uint64_t u;
        std::memcpy(&u, &v, 8);
#endif
        const double e = static_cast<double>(static_cast<std::int64_t>((u >> 52) & 0x7FF) - 1023);
        const double m = static_cast<double>(u & ((std::uint64_t{1} << 52) - 1)) * 0x1p-52; // [0, 1)
        return (e + log2OnePlus(m)) * 0.30102999566398120;
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
