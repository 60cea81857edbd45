#pragma once
// One count per element for both error histograms of the fast analysis pass (analyzer_fast.h): x − x̂
// counted in a cell of its sign, its octave and the top six bits of its mantissa, a few integer
// operations on the float's bits. When every edge of the error histogram (linear bins of a power-of-two
// width) and of the |error| histogram (octave bins) falls on a cell boundary (fits()), each cell lies
// in one bin of each, and the cells' counts become both histograms' counts when the cells are flushed.
// A value exactly on a cell's lower boundary is counted apart from the rest of the cell (a negative
// one, or one on a closed top edge, belongs to another bin than the cell's inside). An inexact float
// difference, which the caller passes as NaN, goes through Histogram::add with its exact double.
#include "analysis/histogram_filler.h"

#include <cstdint>
#include <vector>

namespace ql {

class ErrorCells {
public:
    static constexpr int kMantissaBits = 6;
    static constexpr int kPerOctave = 1 << kMantissaBits;

    /// Whether cells can count for both: every edge of both is a cell boundary over normal floats,
    /// and none is zero (the cells below the lowest octave must lie in one bin of each).
    static bool fits(const Histogram& error, const Histogram& absError);

    /// Where each slot's count goes in each histogram (a bin, or BinPlacement's kUnder or kOver):
    /// made once for a tensor, whose slices all count on the same edges. Requires fits().
    class Layout {
    public:
        Layout(const Histogram& error, const Histogram& absError);
        ~Layout();
        Layout(const Layout&) = delete;
        Layout& operator=(const Layout&) = delete;

    private:
        friend class ErrorCells;
        int low = 0, top = 0;                         // cells from 2^low to 2^top
        std::vector<std::int32_t> errorSlot, absSlot; // per slot
    };

    /// Both histograms must outlive the cells, and have the edges `layout` was made for.
    ErrorCells(Histogram& error, Histogram& absError, const Layout& layout);
    ~ErrorCells();
    ErrorCells(const ErrorCells&) = delete;
    ErrorCells& operator=(const ErrorCells&) = delete;

    static constexpr int kTables = 1;

    /// The slot of each lane of e (x − x̂ where exact, NaN where not); `slow` marks those the exact
    /// path takes.
    template <typename F, typename I> [[gnu::always_inline]] I slotsOf(F e, I& slow) const {
        const I u = reinterpret_cast<I>(e);
        const I magnitude = u & 0x7FFFFFFF;
        // The cell within its sign: 0 below the lowest octave, 1 .. cells, cells + 1 above the top.
        // (Clamped with shifts and masks: GCC scalarises ?: and some comparisons on these vectors.)
        I cell = (magnitude >> kBelow) - ((127 + m_span.low) * kPerOctave - 1);
        cell &= ~(cell >> 31);
        const I above = (m_cells + 1 - cell) >> 31;
        cell = (cell & ~above) | ((I{} + (m_cells + 1)) & above);
        const I below = magnitude & ((1 << kBelow) - 1); // zero on the cell's lower boundary
        const I inside = ((below | -below) >> 31) & 1;
        const I slot = 2 * cell + inside + ((u >> 31) & signStride());
        slow = e != e;
        return (slot & ~slow) | ((I{} + slowSlot()) & slow);
    }
    /// The tables for a block of n slots: add(t, slot) counts in table t.
    [[gnu::always_inline]] HistogramFiller::Counter startBlock(int n) {
        if (m_pending > kFlushAt) flush();
        m_pending += n;
        return {m_counts.data(), stride()};
    }
    [[gnu::always_inline]] std::int32_t slowSlot() const { return 2 * signStride(); }

    /// Each slot's counts into the bins the layout gives it (the destructor does too).
    void flush();

    /// Adds the values of the slow slots, exact(k) the exact double of value k.
    template <typename Exact>
    [[gnu::always_inline]] void addSlow(const std::int32_t* blockSlots, int n, Exact exact) {
        for (int k = 0; k < n; ++k)
            if (blockSlots[k] == slowSlot()) {
                const double e = exact(k);
                m_error.add(e);
                m_absError.add(std::fabs(e));
            }
    }

private:
    struct Span {
        int low, top; // cells from 2^low to 2^top
    };
    static Span spanOf(const Histogram& error, const Histogram& absError);
    // The magnitude a slot stands for: one inside its cell (its lower boundary, the middle of its
    // inside), below the lowest octave, or infinity above the top.
    static double magnitudeOf(const Span& span, int slotInSign);
    // Per sign: below the lowest octave, each cell, above the top, each as its lower boundary and
    // its inside.
    [[gnu::always_inline]] std::int32_t signStride() const { return 2 * (m_cells + 2); }
    [[gnu::always_inline]] std::ptrdiff_t stride() const { return 2 * signStride() + 1; }
    static constexpr int kBelow = 23 - kMantissaBits; // mantissa bits below a cell's

    // 32-bit counts, added to the histograms before any could wrap.
    static constexpr std::int64_t kFlushAt = (std::int64_t{1} << 31) - HistogramFiller::kBlock;
    std::int64_t m_pending = 0;

    Histogram& m_error;
    Histogram& m_absError;
    const Layout& m_layout;
    Span m_span;
    std::int32_t m_cells;                // per sign
    std::vector<std::uint32_t> m_counts; // kTables tables of stride() slots
};

} // namespace ql
