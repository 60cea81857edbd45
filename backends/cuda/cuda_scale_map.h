#pragma once
// Element -> scale index on the device, without a 64-bit division per element. The tensor is seen
// as rows x inner (inner = last dimension): a row's first scale comes from a rule (zero, linear, or
// a table built on the host), a column adds its offset (shared, full, block of b, or a table for
// ragged groups). A cursor walks the elements and carries rows over, so only its starting point
// needs a division. Host and device code alike (QL_HD); tst_cuda_walk checks it against
// ScaleIndexer for every layout.
#include "cuda/cuda_element.h"

#include <cstdint>

namespace ql::cuda {

/// n / d for n < 2^31 with a multiply-high and a shift (Granlund-Montgomery, as CUTLASS's FastDivmod).
struct FastDivide {
    std::uint32_t divisor = 1;
    std::uint32_t multiplier = 0;
    std::uint32_t shift = 0;

    static FastDivide of(std::uint32_t d) {
        FastDivide f;
        f.divisor = d;
        if (d <= 1) return f;
        int log2Ceil = 0;
        while ((std::uint64_t{1} << log2Ceil) < d)
            ++log2Ceil;
        const int p = 31 + log2Ceil;
        f.multiplier = static_cast<std::uint32_t>(((std::uint64_t{1} << p) + d - 1) / d);
        f.shift = static_cast<std::uint32_t>(p - 32);
        return f;
    }

    QL_HD std::uint32_t divide(std::uint32_t n) const {
        if (divisor <= 1) return n;
#if defined(__CUDA_ARCH__)
        return __umulhi(n, multiplier) >> shift;
#else
        return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * multiplier) >> 32) >> shift;
#endif
    }
};

enum class RowRule : std::uint8_t {
    Zero,   // every row starts at scale 0 (leading dimensions all shared)
    Linear, // row r starts at r * rowStride (leading dimensions all full)
    Table,  // rowBase[r], built on the host; one padding entry after the last row
};

enum class ColumnRule : std::uint8_t {
    Shared, // + 0
    Full,   // + col
    Block,  // + col / block
    Table,  // + columnTable[col] (ragged groups)
};

/// The mapping as the kernel reads it; pointers are device memory there, host memory in tests.
struct ScaleMapView {
    const std::int64_t* rowBase;
    const std::int32_t* columnTable;
    std::int64_t rowStride;
    std::int64_t inner; // < 2^31 (CudaBackend::supports)
    RowRule rowRule;
    ColumnRule columnRule;
    FastDivide block;

    QL_HD std::int64_t rowStart(std::int64_t row) const {
        switch (rowRule) {
        case RowRule::Zero:
            return 0;
        case RowRule::Linear:
            return row * rowStride;
        case RowRule::Table:
            return rowBase[row];
        }
        return 0;
    }
    QL_HD std::int64_t columnOffset(std::int64_t col) const {
        switch (columnRule) {
        case ColumnRule::Shared:
            return 0;
        case ColumnRule::Full:
            return col;
        case ColumnRule::Block:
            return block.divide(static_cast<std::uint32_t>(col));
        case ColumnRule::Table:
            return columnTable[col];
        }
        return 0;
    }
};

/// A position (row, col) and the scale index its row starts at.
struct Cursor {
    std::int64_t row;
    std::int64_t col;
    std::int64_t base;

    /// The one division: where flat element `flat` sits.
    QL_HD static Cursor at(std::int64_t flat, const ScaleMapView& m) {
        const std::int64_t row = flat / m.inner;
        return {row, flat - row * m.inner, m.rowStart(row)};
    }
    QL_HD std::int64_t scaleIndex(const ScaleMapView& m) const { return base + m.columnOffset(col); }
    /// To the next element. Past the last row it reads the table's padding entry, never beyond.
    QL_HD void next(const ScaleMapView& m) {
        if (++col == m.inner) {
            col = 0;
            base = m.rowStart(++row);
        }
    }
    /// Forward by rows * inner + cols elements (cols < inner). The row start is not read here: the
    /// new position may lie past the end, so callers read it once they know it does not.
    QL_HD void jump(std::int64_t rows, std::int64_t cols, const ScaleMapView& m) {
        row += rows;
        col += cols;
        if (col >= m.inner) {
            col -= m.inner;
            ++row;
        }
    }
};

} // namespace ql::cuda
