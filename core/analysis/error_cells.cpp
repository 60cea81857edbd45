#include "analysis/error_cells.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ql {

bool ErrorCells::fits(const Histogram& error, const Histogram& absError) {
    if (error.scale() != Histogram::Scale::Linear || absError.scale() != Histogram::Scale::Octaves)
        return false;
    const Span s = spanOf(error, absError);
    if (s.low < std::numeric_limits<float>::min_exponent - 1 ||
        s.top > std::numeric_limits<float>::max_exponent - 1 || s.top <= s.low || s.top - s.low > 64)
        return false;
    auto onBoundary = [&](double v) {
        const double a = std::fabs(v);
        if (a < std::ldexp(1.0, s.low) || a > std::ldexp(1.0, s.top)) return false;
        return std::fmod(a, std::ldexp(1.0, std::ilogb(a) - kMantissaBits)) == 0.0;
    };
    for (const Histogram* h : {&error, &absError})
        for (double v : h->edges())
            if (!onBoundary(v)) return false;
    return true;
}

ErrorCells::ErrorCells(Histogram& error, Histogram& absError)
    : m_error(error)
    , m_absError(absError)
    , m_span(spanOf(error, absError))
    , m_cells((m_span.top - m_span.low) * kPerOctave)
    , m_errorHi(static_cast<float>(error.hi()))
    , m_absHi(static_cast<float>(absError.hi()))
    , m_counts(static_cast<std::size_t>(kTables) * static_cast<std::size_t>(stride()), 0u) {}

ErrorCells::~ErrorCells() {
    flush();
}

// The cells reach down to the |error| histogram's lowest edge and up to the higher of the two tops.
ErrorCells::Span ErrorCells::spanOf(const Histogram& error, const Histogram& absError) {
    // (Above the top edge: a value on it has its own boundary count, in the last bin.)
    const double top = std::max(std::fabs(error.hi()), absError.hi());
    return {std::ilogb(absError.lo()), std::ilogb(top) + 1};
}

void ErrorCells::flush() {
    const int cells = m_cells;
    for (int t = 0; t < kTables; ++t) {
        const std::uint32_t* table = m_counts.data() + t * stride();
        for (int slot = 0; slot < 2 * signStride(); ++slot) {
            const std::int64_t n = table[slot];
            if (n == 0) continue;
            const bool negative = slot >= signStride();
            const int cell = (slot % signStride()) / 2;
            const bool inside = slot % 2 != 0;
            double magnitude;
            if (cell == 0) { // below the lowest octave: one bin of each (fits())
                magnitude = std::ldexp(1.0, m_span.low - 1);
            } else if (cell == cells + 1) {
                magnitude = std::numeric_limits<double>::infinity();
            } else {
                const int i = cell - 1;
                magnitude = std::ldexp(1.0 + (i % kPerOctave + (inside ? 0.5 : 0.0)) / kPerOctave,
                                       m_span.low + i / kPerOctave);
            }
            m_error.add(negative ? -magnitude : magnitude, n);
            m_absError.add(magnitude, n);
        }
    }
    std::fill(m_counts.begin(), m_counts.end(), 0u);
    m_pending = 0;
}

} // namespace ql
