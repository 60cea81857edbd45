#pragma once
// Fills a Histogram from blocks of values in float lanes (a register's worth), with the same bins as
// Histogram::add (internal to the fast analysis pass, analyzer_fast.h).
//
// Each block comes as floats, each one the value itself or NaN where the value is no float (a
// function gives every value as the exact double). Linear bins: a position found in float arithmetic
// is trusted only when it lies further from every edge than its worst error, bounded for the
// histogram's own range when the filler is made; with ends that are floats, values beyond them are
// counted there. Every other value, and every value of log10 or octave bins (the pass counts its
// error histograms through ErrorCells), goes through Histogram::add with its exact double. So the
// counts equal add()'s exactly, whatever the lanes.
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
        , m_tables(static_cast<std::size_t>(kTables) * static_cast<std::size_t>(m_bins + kSlots), 0u) {
        const double bins = static_cast<double>(m_bins);
        m_lo = static_cast<float>(h.m_lo);
        m_hi = static_cast<float>(h.m_hi);
        m_floatEnds =
            static_cast<double>(m_lo) == h.m_lo && static_cast<double>(m_hi) == h.m_hi && std::isfinite(m_hi);
        if (h.m_scale != Histogram::Scale::Linear) return; // log10 and octave bins: add() for every value
        // Worst distance, in bins, between the float position and the exact one (rounding of the
        // value, of a and b, of the difference and the product); the exact one is itself trusted
        // 1e-6 from an edge (BinRule's linear margin).
        m_a = static_cast<float>(h.m_a);
        m_b = static_cast<float>(h.m_b);
        const double reach = std::max(std::fabs(h.m_lo), std::fabs(h.m_hi));
        const double error = 0x1p-23 * (h.m_b * (2 * reach + std::fabs(h.m_a) + h.m_width) + 2 * bins);
        m_margin = static_cast<float>(2 * error + 1e-6);
        if (std::isfinite(m_a) && std::isfinite(m_b) && m_b > 0 && m_margin < 0.01f && m_bins < (1 << 20))
            m_mode = Mode::Near;
    }
    ~HistogramFiller() { flush(); }
    HistogramFiller(const HistogramFiller&) = delete;
    HistogramFiller& operator=(const HistogramFiller&) = delete;

    /// Counts n <= kBlock values: approx[k] is value k as a float, or NaN where value k is none (an
    /// inexact difference); exact(k) gives value k as the double Histogram::add bins. Lanes: the
    /// floats of the ISA's widest register (GCC lowers wider vectors lane by lane).
    template <int Lanes, typename Exact>
    [[gnu::always_inline]] void addBlock(const float* approx, int n, Exact exact) {
        if (!vectorised()) {
            for (int k = 0; k < n; ++k)
                m_h.add(exact(k));
            return;
        }
        using F = typename FloatLanes<Lanes>::F;
        using I = typename FloatLanes<Lanes>::I;
        alignas(64) std::int32_t blockSlots[kBlock];
        I anySlow = {};
        int k = 0;
        for (; k + Lanes <= n; k += Lanes) {
            F v;
            std::memcpy(&v, approx + k, sizeof v);
            I slow;
            const I slot = slotsOf<F, I>(v, slow);
            anySlow |= slow;
            std::memcpy(blockSlots + k, &slot, sizeof slot);
        }
        const bool tail = endBlock<Lanes>(blockSlots, k, n);
        const Counter c = startBlock(n);
        k = 0;
        for (; k + kTables <= n; k += kTables)
            for (int t = 0; t < kTables; ++t)
                c.add(t, blockSlots[k + t]);
        for (; k < n; ++k)
            c.add(0, blockSlots[k]);
        if (tail || anySlowIn(anySlow)) [[unlikely]]
            addSlow<Lanes>(blockSlots, n, exact);
    }

    /// Adds the tables' counts into the histogram (the destructor does too).
    void flush() {
        if (m_pending == 0) return;
        const auto stride = static_cast<std::size_t>(slotCount());
        for (std::size_t t = 0; t < static_cast<std::size_t>(kTables); ++t) {
            const std::uint32_t* table = m_tables.data() + t * stride;
            for (std::int32_t slot = 0; slot < slotCount(); ++slot)
                addToSlot(slot, table[slot]);
        }
        std::fill(m_tables.begin(), m_tables.end(), 0u);
        m_pending = 0;
    }

    // The parts of addBlock, for a pass that fills several histograms in one loop.

    /// Slots a value may take: the bins, below, above, and the exact path.
    std::int32_t slotCount() const { return m_bins + kSlots; }
    /// Adds n values counted elsewhere in a slot (the exact path's are not counted: add() took them).
    void addToSlot(std::int32_t slot, std::uint64_t n) {
        const auto count = static_cast<std::int64_t>(n);
        if (slot < m_bins)
            m_h.m_counts[static_cast<std::size_t>(slot)] += count;
        else if (slot == underSlot())
            m_h.m_under += count;
        else if (slot == overSlot())
            m_h.m_over += count;
    }

    /// Whether values are placed in vector lanes (slotsOf); if not, add() takes each one.
    [[gnu::always_inline]] bool vectorised() const { return m_mode != Mode::None; }
    static constexpr int kTables = 8; // count tables taken in turn, so neighbouring equal bins do not chain
    /// The slot of each lane of v (values as addBlock takes them): its bin, below or above the range,
    /// or the exact path, which `slow` marks.
    template <typename F, typename I> [[gnu::always_inline]] I slotsOf(F v, I& slow) const {
        return nearBins<F, I>(v, slow);
    }
    /// Slots k .. n − 1 of a block (its last values short of a register) go to the exact path, and the
    /// slots up to whole registers are padding; true if there were any.
    template <int Lanes> [[gnu::always_inline]] bool endBlock(std::int32_t* blockSlots, int k, int n) const {
        for (int j = k; j < n; ++j)
            blockSlots[j] = slowSlot();
        for (int pad = n; pad % Lanes != 0; ++pad) // whole vectors for the rescan, not counted
            blockSlots[pad] = m_bins;
        return k < n;
    }
    template <typename I> [[gnu::always_inline]] static bool anySlowIn(I slow) {
        std::int32_t any = 0;
        for (std::size_t l = 0; l < sizeof slow / sizeof any; ++l)
            any |= slow[l];
        return any != 0;
    }
    /// Where a block's slots are counted: add(t, slot) counts in table t.
    struct Counter {
        std::uint32_t* tables;
        std::ptrdiff_t stride;
        [[gnu::always_inline]] void add(int t, std::int32_t slot) const {
            ++tables[t * stride + static_cast<std::uint32_t>(slot)];
        }
    };
    /// The tables for a block of n slots.
    [[gnu::always_inline]] Counter startBlock(int n) {
        if (m_pending > kFlushAt) flush();
        m_pending += n;
        return {m_tables.data(), static_cast<std::ptrdiff_t>(m_bins) + kSlots};
    }
    /// Adds the values of a block's slots that take the exact path, a register at a time (most hold none).
    template <int Lanes, typename Exact>
    [[gnu::always_inline]] void addSlow(const std::int32_t* blockSlots, int n, Exact exact) {
        using F = typename FloatLanes<Lanes>::F;
        using I = typename FloatLanes<Lanes>::I;
        for (int k = 0; k < n; k += Lanes) {
            I v;
            std::memcpy(&v, blockSlots + k, sizeof v);
            if (!anySlowIn(__builtin_convertvector(v, F) == static_cast<float>(slowSlot()))) continue;
            // The register's slow lanes listed without a branch each (on a coarse grid of values, bf16
            // under MX's power-of-two scales, a twelfth of the lanes are slow, at random).
            int slowAt[Lanes], count = 0;
            for (int j = k; j < k + Lanes && j < n; ++j) {
                slowAt[count] = j;
                count += blockSlots[j] == slowSlot();
            }
            for (int q = 0; q < count; ++q)
                addNearEdge(exact(slowAt[q]));
        }
    }

private:
    // add(v) for a value the float position left near an edge (only a vectorised filler, whose bins
    // are linear, has such): in the range, its bin straight from the edges (BinRule::nearPosition),
    // without add()'s branches; beyond it, through add().
    void addNearEdge(double v) {
        const Histogram& h = m_h;
        if (!(v >= h.m_lo && v <= h.m_hi)) return m_h.add(v);
        const BinRule rule = h.rule();
        ++m_h.m_counts[static_cast<std::size_t>(rule.nearPosition(v, (v - rule.a) * rule.b))];
    }

    enum class Mode : std::uint8_t {
        None, // every value through add()
        Near, // linear bins, the float position trusted away from the edges
    };
    // After each table's bins: values below lo, above hi, and those taking the exact path (whose
    // counts are dropped: add() counts them).
    static constexpr int kSlots = 3;
    std::int32_t underSlot() const { return m_bins; }
    std::int32_t overSlot() const { return m_bins + 1; }
    std::int32_t slowSlot() const { return m_bins + 2; }

    // Masks are all ones or zero: selects as bit operations (GCC scalarises ?: on these vectors), and
    // float comparisons only (GCC 12 scalarises some integer ones on these vectors).
    template <typename I> static I select(I mask, I a, I b) { return (a & mask) | (b & ~mask); }

    // The slot of each lane: its bin where `fast`, below or above the range those slots, and the
    // exact path otherwise (NaN among them), which `slow` marks. With ends that are no floats, only
    // the bins are trusted.
    template <typename F, typename I> I placed(F v, I bin, I fast, I& slow) const {
        const I in = (v >= m_lo) & (v <= m_hi);
        slow = ~(in & fast);
        bin = select(slow, I{} + slowSlot(), bin);
        if (!m_floatEnds) return bin;
        const I under = v<m_lo, over = v> m_hi;
        slow &= ~(under | over);
        return select(over, I{} + overSlot(), select(under, I{} + underSlot(), bin));
    }
    template <typename F, typename I> I nearBins(F v, I& slow) const {
        const F t = (v - m_a) * m_b;
        const I whole = __builtin_convertvector(t, I); // truncation: the floor wherever frac > 0
        const F frac = t - __builtin_convertvector(whole, F);
        const float top = static_cast<float>(m_bins) - m_margin;
        return placed(v, whole, (frac > m_margin) & (frac < 1.0f - m_margin) & (t < top), slow);
    }

    Histogram& m_h;
    std::int32_t m_bins;
    Mode m_mode = Mode::None;
    float m_lo = 0, m_hi = 0;
    bool m_floatEnds = false; // lo and hi are floats: a float comparison places values beyond them
    float m_a = 0, m_b = 0;   // the position t = (v − a)·b
    float m_margin = 0.5f;
    std::vector<std::uint32_t> m_tables; // kTables tables of bins + kSlots counts
    std::int64_t m_pending = 0;          // values counted in the tables since they were last added up
    // 32-bit counts (half the cache of 64-bit ones), added to the histogram before any could wrap.
    static constexpr std::int64_t kFlushAt = (std::int64_t{1} << 31) - kBlock;
};

} // namespace ql
