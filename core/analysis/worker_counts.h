#pragma once
// One worker's counts and histograms in the fast analysis pass (analyzer_fast.h), made by its first
// part: whole numbers add up the same in any order, so a worker keeps one set for all its slices, its
// tables added into the histograms once. Compiled for the baseline ISA (only the pass's loops are
// built per ISA).
#include "analysis/analyzer.h"
#include "analysis/code_stats.h"
#include "analysis/error_cells.h"
#include "analysis/histogram.h"
#include "analysis/histogram_filler.h"
#include "base/mapped_memory.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace ql::detail {

/// Each element's value slot (HistogramFiller::slotsOf) and code byte counted together, one count
/// for both histograms where the codes are bytes: a count is a load and a store, and the pass's
/// counting is bound by its stores. The table is a worker's own (slots × 256 cells), made at its first
/// count; flush() splits it back into the two. Its quarter of a megabyte is pooled scratch
/// (mapped::Scratch): in fresh 4 KiB pages, each faulted in at its first count, it cost a CLI run
/// about a millisecond a worker, and a kept block is only cleared.
class ValueCodePairs {
public:
    /// The table for a block of n pairs (made at the first; the counts so far added into `values` and
    /// `codes` first if n more could wrap one): count(table, valueSlot, code) counts one.
    [[gnu::always_inline]] std::uint32_t* startBlock(int n, HistogramFiller& values,
                                                     std::array<std::int64_t, 256>& codes) {
        if (!m_table) {
            m_size = static_cast<std::size_t>(values.slotCount()) * 256;
            m_table.emplace(m_size * sizeof(std::uint32_t), mapped::Scratch::Contents::Zeroed);
        }
        if (m_pending > kFlushAt) flush(values, codes);
        m_pending += n;
        return counts();
    }
    [[gnu::always_inline]] static void count(std::uint32_t* table, std::int32_t valueSlot,
                                             std::uint8_t code) {
        ++table[static_cast<std::uint32_t>(valueSlot) * 256u + code];
    }
    /// Each value slot's count into `values` (its slow slot's dropped: the exact path counts those)
    /// and each code's into `codes`.
    void flush(HistogramFiller& values, std::array<std::int64_t, 256>& codes) {
        if (!m_table) return;
        const std::uint32_t* const table = counts();
        const std::size_t slots = m_size / 256;
        for (std::size_t v = 0; v < slots; ++v) {
            std::uint64_t valueCount = 0;
            for (std::size_t c = 0; c < 256; ++c)
                if (const std::uint32_t n = table[v * 256 + c]) {
                    valueCount += n;
                    codes[c] += n;
                }
            values.addToSlot(static_cast<std::int32_t>(v), valueCount);
        }
        std::fill_n(counts(), m_size, 0u);
        m_pending = 0;
    }

private:
    std::uint32_t* counts() const { return static_cast<std::uint32_t*>(m_table->data()); }
    std::optional<mapped::Scratch> m_table; // m_size counts, once made
    std::size_t m_size = 0;
    std::int64_t m_pending = 0; // pairs counted since the table was last added up
    // 32-bit counts, added up before any could wrap.
    static constexpr std::int64_t kFlushAt = (std::int64_t{1} << 31) - HistogramFiller::kBlock;
};

struct alignas(64) WorkerCounts {
    WorkerCounts(const TensorAnalysis& a, const ErrorCells::Layout* cellLayout)
        : wideCodes(a.codes)
        , error(a.error)
        , absErrorLog(a.absErrorLog)
        , values(a.values)
        , errorFill(error)
        , valuesFill(values) {
        if (cellLayout && valuesFill.vectorised()) cells.emplace(error, absErrorLog, *cellLayout);
    }
    /// Adds the count tables into the histograms.
    void flush() {
        if (cells) cells->flush();
        errorFill.flush();
        valuesFill.flush();
        pairs.flush(valuesFill, byteCodes[0]);
    }

    // 8-bit and smaller targets, by code & 0xFF, in four tables taken in turn: runs of one code
    // then increment four counters, not one (no store-to-load chain per element).
    std::array<std::array<std::int64_t, 256>, 4> byteCodes{};
    CodeStats wideCodes;                  // int32
    Histogram error, absErrorLog, values; // on the edges the plan and params give (openHistograms)
    // Where the parts count: both error histograms in one cell per element where the edges allow
    // (ErrorCells), else the error filler (and add() for |error|); the values' filler, and with byte
    // codes and cells, the values and codes together.
    HistogramFiller errorFill, valuesFill;
    std::optional<ErrorCells> cells;
    ValueCodePairs pairs;
};

} // namespace ql::detail
