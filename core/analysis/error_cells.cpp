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

ErrorCells::Layout::Layout(const Histogram& error, const Histogram& absError) {
    const Span span = spanOf(error, absError);
    low = span.low;
    top = span.top;
    const int perSign = 2 * ((top - low) * kPerOctave + 2);
    const BinPlacement e = error.placement(), a = absError.placement();
    for (int slot = 0; slot < 2 * perSign; ++slot) {
        const double magnitude = magnitudeOf(span, slot % perSign);
        errorSlot.push_back(static_cast<std::int32_t>(e.slotOf(slot < perSign ? magnitude : -magnitude)));
        absSlot.push_back(static_cast<std::int32_t>(a.slotOf(magnitude)));
    }
}

ErrorCells::Layout::~Layout() = default;

ErrorCells::ErrorCells(Histogram& error, Histogram& absError, const Layout& layout)
    : m_error(error)
    , m_absError(absError)
    , m_layout(layout)
    , m_span{layout.low, layout.top}
    , m_cells((m_span.top - m_span.low) * kPerOctave)
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

double ErrorCells::magnitudeOf(const Span& span, int slotInSign) {
    const int cell = slotInSign / 2, cells = (span.top - span.low) * kPerOctave;
    if (cell == 0) return std::ldexp(1.0, span.low - 1); // below the lowest octave: one bin of each (fits())
    if (cell == cells + 1) return std::numeric_limits<double>::infinity();
    const int i = cell - 1;
    const double inside = slotInSign % 2 != 0 ? 0.5 : 0.0;
    return std::ldexp(1.0 + (i % kPerOctave + inside) / kPerOctave, span.low + i / kPerOctave);
}

void ErrorCells::flush() {
    if (m_pending == 0) return;
    auto addTo = [](Histogram& h, const std::vector<std::int32_t>& slotOf, const std::uint32_t* counts,
                    std::size_t slots) {
        std::vector<std::int64_t> bins(static_cast<std::size_t>(h.binCount()), 0);
        std::int64_t under = 0, over = 0;
        for (std::size_t slot = 0; slot < slots; ++slot) {
            const std::int64_t n = counts[slot];
            const std::int32_t to = slotOf[slot];
            if (to >= 0)
                bins[static_cast<std::size_t>(to)] += n;
            else
                (to == BinPlacement::kUnder ? under : over) += n;
        }
        h.addCounts(bins, under, over, 0);
    };
    for (int t = 0; t < kTables; ++t) {
        const std::uint32_t* table = m_counts.data() + t * stride();
        const auto slots = 2 * static_cast<std::size_t>(signStride());
        addTo(m_error, m_layout.errorSlot, table, slots);
        addTo(m_absError, m_layout.absSlot, table, slots);
    }
    std::fill(m_counts.begin(), m_counts.end(), 0u);
    m_pending = 0;
}

} // namespace ql
