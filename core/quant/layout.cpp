#include "quant/layout.h"

#include "base/error.h"

#include <string>

namespace ql {
namespace {

std::int64_t groupsIn(const DimMapping& m, std::int64_t dim) {
    switch (m.kind) {
    case DimMapping::Kind::Full:
        return dim;
    case DimMapping::Kind::Shared:
        return 1;
    case DimMapping::Kind::Block:
        return m.block <= 0 ? 0 : dim / m.block + (dim % m.block != 0); // no overflow
    case DimMapping::Kind::Ragged:
        return static_cast<std::int64_t>(m.ends.size());
    }
    return 1;
}

} // namespace

Shape Layout::scaleShape(const Shape& input) const {
    Shape s(input.size());
    for (std::size_t d = 0; d < input.size(); ++d)
        s[d] = groupsIn(dims[d], input[d]);
    return s;
}

void Layout::check(const Shape& input) const {
    if (dims.size() != input.size())
        throw QuantError("layout has " + std::to_string(dims.size()) +
                         " dimensions but the tensor has rank " + std::to_string(input.size()));
    for (std::size_t d = 0; d < input.size(); ++d) {
        const auto& m = dims[d];
        if (m.kind == DimMapping::Kind::Block && m.block <= 0)
            throw QuantError("block size along axis " + std::to_string(d) + " must be positive");
        if (m.kind != DimMapping::Kind::Ragged) continue;
        if (m.ends.empty()) throw QuantError("group index is empty: at least one group is needed");
        std::int64_t prev = 0;
        for (std::size_t g = 0; g < m.ends.size(); ++g) {
            if (m.ends[g] < prev)
                throw QuantError("group index must be non-decreasing and non-negative: entry " +
                                 std::to_string(g) + " is " + std::to_string(m.ends[g]) + " after " +
                                 std::to_string(prev));
            prev = m.ends[g];
        }
        if (prev != input[d])
            throw QuantError("group index ends at " + std::to_string(prev) + " but axis " +
                             std::to_string(d) + " has " + std::to_string(input[d]) +
                             " rows (the last entry must equal it)");
    }
}

ScaleIndexer::ScaleIndexer(const Layout& layout, const Shape& shape)
    : m_shape(shape) {
    layout.check(shape);
    const Shape scaleShape = layout.scaleShape(shape);
    const Shape scaleStrides = rowMajorStrides(scaleShape);
    m_scaleCount = elementCount(scaleShape);
    m_offset.resize(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d)
        m_offset[d] = scaleOffsets(layout.dims[d], shape[d], scaleStrides[d]);
}

std::vector<std::int64_t> scaleOffsets(const DimMapping& m, std::int64_t size, std::int64_t stride) {
    std::vector<std::int64_t> table(static_cast<std::size_t>(size));
    std::size_t g = 0;
    for (std::int64_t i = 0; i < size; ++i) {
        std::int64_t group = 0;
        switch (m.kind) {
        case DimMapping::Kind::Full:
            group = i;
            break;
        case DimMapping::Kind::Shared:
            group = 0;
            break;
        case DimMapping::Kind::Block:
            group = m.block > 0 ? i / m.block : 0;
            break; // check() refuses <= 0
        case DimMapping::Kind::Ragged:
            while (m.ends[g] <= i)
                ++g; // empty groups are skipped
            group = static_cast<std::int64_t>(g);
            break;
        }
        table[static_cast<std::size_t>(i)] = group * stride;
    }
    return table;
}

std::int64_t ScaleIndexer::scaleIndexOf(std::int64_t flat) const {
    std::int64_t s = 0;
    for (int d = static_cast<int>(m_shape.size()) - 1; d >= 0; --d) {
        const std::int64_t i = flat % m_shape[d];
        flat /= m_shape[d];
        s += m_offset[d][static_cast<std::size_t>(i)];
    }
    return s;
}

} // namespace ql
