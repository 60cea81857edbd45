#pragma once
// Host side of the kernel arguments: what a ResolvedSpec and its parameters become before upload.
// Header-only so that the host suites (tst_cuda_element, tst_cuda_walk) build it with the host
// compiler, with or without CUDA.
#include "cuda/cuda_walk.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <cstdint>
#include <vector>

namespace ql::cuda {

inline ElementOp elementOpFor(const ResolvedSpec& plan) {
    const Convention& c = plan.convention;
    ElementOp op{};
    op.scaleOp = c.scaleOp;
    op.zeroPoint = c.zeroPoint;
    op.rounding = c.rounding;
    op.nan = c.nan;
    op.floatTarget = isFloatTarget(plan.codeTarget);
    op.saturate = c.overflow == Overflow::Saturate;
    op.zeroScaleMeansOne = c.zeroScaleMeansOne;
    op.zeroScaleGivesZero = c.zeroScaleGivesZero;
    op.fmt = miniFloatSpec(miniFloatOf(plan.codeTarget));
    op.qmin = plan.qmin();
    op.qmax = plan.qmax();
    return op;
}

/// QuantParams::zeroPointOf as a mode: empty -> none, one value -> scalar, else one per scale.
inline ZeroPointMode zeroPointModeOf(const QuantParams& params) {
    if (params.zeroPoints.empty()) return ZeroPointMode::None;
    return params.zeroPoints.size() == 1 ? ZeroPointMode::Scalar : ZeroPointMode::PerGroup;
}

/// The rows x inner mapping with its tables, ready to copy to the device.
struct HostScaleMap {
    std::int64_t rows = 1;
    std::int64_t inner = 1;
    RowRule rowRule = RowRule::Zero;
    std::int64_t rowStride = 0;
    ColumnRule columnRule = ColumnRule::Shared;
    std::uint32_t block = 1;
    std::vector<std::int64_t> rowBase;     // RowRule::Table: rows + 1 entries (the last one padding)
    std::vector<std::int32_t> columnTable; // ColumnRule::Table: inner entries

    /// The view with the tables at the given addresses (device copies, or the host vectors).
    ScaleMapView view(const std::int64_t* rowBaseAt, const std::int32_t* columnTableAt) const {
        return {rowBaseAt, columnTableAt, rowStride, inner, rowRule, columnRule, FastDivide::of(block)};
    }
    ScaleMapView hostView() const { return view(rowBase.data(), columnTable.data()); }
};

/// Throws QuantError when the layout does not fit the shape (as ScaleIndexer does).
inline HostScaleMap buildScaleMap(const ResolvedSpec& plan) {
    HostScaleMap map;
    const Shape& shape = plan.shape;
    plan.layout.check(shape);
    const int rank = static_cast<int>(shape.size());
    if (rank == 0) return map; // one element, one scale
    const Shape strides = rowMajorStrides(plan.layout.scaleShape(shape));
    map.inner = shape.back();
    const DimMapping& last = plan.layout.dims.back();
    switch (last.kind) {
    case DimMapping::Kind::Shared:
        map.columnRule = ColumnRule::Shared;
        break;
    case DimMapping::Kind::Full:
        map.columnRule = ColumnRule::Full;
        break;
    case DimMapping::Kind::Block:
        map.columnRule = ColumnRule::Block;
        map.block = static_cast<std::uint32_t>(last.block);
        break;
    case DimMapping::Kind::Ragged: {
        map.columnRule = ColumnRule::Table;
        for (std::int64_t v : scaleOffsets(last, map.inner, 1))
            map.columnTable.push_back(static_cast<std::int32_t>(v));
        break;
    }
    }
    bool allShared = true, allFull = true;
    map.rows = 1;
    for (int d = 0; d + 1 < rank; ++d) {
        allShared = allShared && plan.layout.dims[d].kind == DimMapping::Kind::Shared;
        allFull = allFull && plan.layout.dims[d].kind == DimMapping::Kind::Full;
        map.rows *= shape[d];
    }
    if (allShared) return map;
    if (allFull) { // row-major over full dimensions: scale rows follow tensor rows one to one
        map.rowRule = RowRule::Linear;
        map.rowStride = strides[rank - 2];
        return map;
    }
    map.rowRule = RowRule::Table;
    std::vector<std::int64_t> base{0};
    for (int d = 0; d + 1 < rank; ++d) { // the odometer over leading dimensions, as an outer sum
        const auto off = scaleOffsets(plan.layout.dims[d], shape[d], strides[d]);
        std::vector<std::int64_t> next;
        next.reserve(base.size() * off.size());
        for (std::int64_t b : base)
            for (std::int64_t o : off)
                next.push_back(b + o);
        base = std::move(next);
    }
    base.push_back(0);
    map.rowBase = std::move(base);
    return map;
}

} // namespace ql::cuda
