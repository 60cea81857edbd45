#pragma once
// How scale entries map onto a tensor's elements, one rule per input dimension.
#include "tensor/shape.h"

#include <cstdint>
#include <vector>

namespace ql {

struct DimMapping {
    enum class Kind : std::uint8_t {
        Full,   // each index has its own scale
        Shared, // one scale across the dimension
        Block,  // one scale per `block` consecutive indices; the last block may be short
        Ragged, // variable groups ending (exclusive) at the cumulative `ends`
    };
    Kind kind = Kind::Shared;
    std::int64_t block = 0;
    std::vector<std::int64_t> ends;

    static DimMapping full() { return {Kind::Full, 0, {}}; }
    static DimMapping shared() { return {Kind::Shared, 0, {}}; }
    static DimMapping blocked(std::int64_t n) { return {Kind::Block, n, {}}; }
    static DimMapping ragged(std::vector<std::int64_t> ends) { return {Kind::Ragged, 0, std::move(ends)}; }
    bool operator==(const DimMapping&) const = default;
};

struct Layout {
    std::vector<DimMapping> dims;

    /// Scale tensor shape for `input`: Full -> dim, Shared -> 1, Block -> ceil(dim/n), Ragged -> #groups.
    Shape scaleShape(const Shape& input) const;
    /// Throws QuantError when the layout does not fit the shape (rank, ragged ends, block size 0).
    void check(const Shape& input) const;
    bool operator==(const Layout&) const = default;
};

/// For one dimension of `size` indices: index -> (its group under `m`) * `stride`, the scale
/// tensor's stride along that dimension. ScaleIndexer sums these over the dimensions.
std::vector<std::int64_t> scaleOffsets(const DimMapping& m, std::int64_t size, std::int64_t stride);

/// Maps a flat (row-major) element index to its flat scale index. One indexer serves every layout:
/// each dimension gets a table from index to group, precomputed once (sum of dims entries).
class ScaleIndexer {
public:
    ScaleIndexer(const Layout& layout, const Shape& shape);

    std::int64_t scaleCount() const { return m_scaleCount; }
    std::int64_t scaleIndexOf(std::int64_t flatElement) const;
    /// Calls fn(flatElement, scaleIndex) for every element in row-major order.
    template <typename Fn> void forEach(Fn&& fn) const { forEachIn(0, elementCount(m_shape), fn); }
    /// The same for the elements [begin, end) only, so chunks can run on separate threads.
    template <typename Fn> void forEachIn(std::int64_t begin, std::int64_t end, Fn&& fn) const;

private:
    Shape m_shape;
    std::vector<std::vector<std::int64_t>> m_offset; // per dim: index -> group * scale stride
    std::int64_t m_scaleCount = 1;
};

template <typename Fn> void ScaleIndexer::forEachIn(std::int64_t begin, std::int64_t end, Fn&& fn) const {
    const int rank = static_cast<int>(m_shape.size());
    if (begin >= end) return;
    if (rank == 0) {
        fn(std::int64_t{0}, std::int64_t{0});
        return;
    }
    const std::int64_t inner = m_shape[rank - 1];
    const auto& last = m_offset[rank - 1];
    std::vector<std::int64_t> idx(rank, 0); // the row of `begin`, in every dimension but the last
    for (std::int64_t rest = begin / inner, d = rank - 2; d >= 0; --d) {
        idx[d] = rest % m_shape[d];
        rest /= m_shape[d];
    }
    std::int64_t flat = begin;
    std::int64_t col = begin % inner;
    for (;;) {
        std::int64_t base = 0;
        for (int d = 0; d < rank - 1; ++d)
            base += m_offset[d][idx[d]];
        for (; col < inner; ++col) {
            if (flat == end) return;
            fn(flat++, base + last[col]);
        }
        col = 0;
        int d = rank - 2;
        for (; d >= 0; --d) {
            if (++idx[d] < m_shape[d]) break;
            idx[d] = 0;
        }
        if (d < 0 || flat == end) return;
    }
}

} // namespace ql
