#pragma once
// The statistics kernels' bodies: the report's accumulators (core/analysis/accumulators.h) made on
// the device from the input and the codes already there, in two passes (the histograms' edges follow
// from the plan and the params, as the analysis opens them; the passes could be one). Every element's x̂, clip
// edges, error sums and bin are core's own rules (dequantizeValue's arithmetic, ClipEdgeRule,
// ErrorStats::addElementTo, ClippingStats::addTo, BinPlacement), compiled for both sides; as in cuda_walk.h,
// the bodies are functions of (thread, thread count), so tst_cuda_statistics runs them on the host for
// several emulated grids and compares the result with analyzeReference.
//
// Narrow codes only (one byte each): int32 targets keep the host pass.
#include "analysis/bin_rule.h"
#include "analysis/clip_edge_rule.h"
#include "analysis/error_stats.h"
#include "cuda/cuda_walk.h"

#include <cmath>
#include <cstdint>

namespace ql::cuda {

/// Pass one's per-block result, merged on the host in block order (so the sums never depend on
/// the order the blocks finish in).
struct BlockSums {
    ErrorStats::Sums errors;
    GroupClipping total; // every group's clipping, kept or not
};

QL_HD inline BlockSums emptyBlockSums() {
    BlockSums b{};
    b.errors.worstIndex = -1;
    return b;
}

QL_HD inline void mergeBlockSums(BlockSums& into, const BlockSums& o) {
    ErrorStats::mergeInto(into.errors, o.errors);
    into.total.merge(o.total);
}

/// Everything both passes read besides the input; trivially copyable.
struct StatisticsArgs {
    QuantizeArgs walk;         // map, scales, zero points, count; configured for one element a step
    const std::uint8_t* codes; // one byte per element
    float codeValues[256];     // a code byte's value before the zero point and scale (codeValue)
    bool floatTarget;          // minifloat codes: no zero point
    ClipEdgeRule clip;         // the plan's part of every group's clip edges
    std::int64_t rows;         // groups [0, rows) keep a clipping row
    BinPlacement error, absError, values; // pass two's bins (absError's edges in device memory)
};

/// Counts of pass two, as one array: each histogram's bins, then its under, over and NaN counts.
struct HistogramSlots {
    int error, absError, values; // bins of each

    QL_HD int width(int bins) const { return bins + 3; }
    QL_HD int errorAt() const { return 0; }
    QL_HD int absErrorAt() const { return width(error); }
    QL_HD int valuesAt() const { return width(error) + width(absError); }
    QL_HD int total() const { return width(error) + width(absError) + width(values); }
    /// Where a placement's slot (a bin, or BinPlacement's kUnder / kOver / kNan) is counted.
    QL_HD static int of(int start, int bins, std::int64_t slot) {
        return start + (slot >= 0 ? static_cast<int>(slot) : bins - 1 - static_cast<int>(slot));
    }
};

/// x̂ of element `i`, whose scale group is `s`: dequantizeValue's arithmetic.
QL_HD inline float reconstruction(const StatisticsArgs& a, std::int64_t i, std::int64_t s) {
    const float value = a.codeValues[a.codes[i]];
    const float zp = a.floatTarget ? 0.0f : zeroPointAt(s, a.walk);
    return applyInverseScale(a.floatTarget ? value : value - zp, a.walk.scales[s], a.walk.op.scaleOp);
}

QL_HD inline bool finite(float v) {
    return v - v == 0.0f;
}

/// Pass one's work of thread `thread` of `threads` (a multiple of the warp width), lane `lane`: its
/// elements' error sums, ranges, clipping total and code counts into `sums` and `codeCount(byte)`,
/// and each element of a kept group through `row(valid, group, clipping)`, which may reduce across
/// the warp: every lane of a warp runs the same iterations, lanes past the end with valid = false.
template <class In, class CodeCount, class Row>
QL_HD inline void firstPassStrided(const In* x, const StatisticsArgs& a, std::int64_t thread,
                                   std::int64_t threads, int lane, BlockSums& sums, CodeCount&& codeCount,
                                   Row&& row) {
    const std::int64_t n = a.walk.count;
    const std::int64_t first = thread - lane;
    if (first >= n) return;
    Cursor c{thread / a.walk.map.inner, thread % a.walk.map.inner, 0};
    for (std::int64_t w = first; w < n; w += threads) {
        const std::int64_t i = w + lane;
        const bool valid = i < n;
        GroupClipping mine{};
        std::int64_t group = -1;
        if (valid) {
            c.base = a.walk.map.rowStart(c.row);
            const std::int64_t s = c.scaleIndex(a.walk.map);
            const float xi = widen(x[i]);
            const float xh = reconstruction(a, i, s);
            ErrorStats::addElementTo(sums.errors, xi, xh, i);
            codeCount(a.codes[i]);
            if (finite(xi) && finite(xh)) {
                const float zp = a.floatTarget ? 0.0f : zeroPointAt(s, a.walk);
                ClippingStats::addTo(mine, a.clip.edgesFor(a.walk.scales[s], zp), a.floatTarget, xi, xh);
                sums.total.merge(mine);
                if (s < a.rows) group = s;
            }
        }
        row(group >= 0, group, mine);
        c.jump(a.walk.strideRows, a.walk.strideCols, a.walk.map);
    }
}

/// Pass two's work of thread `thread` of `threads`: every finite element's error, |error| and value
/// through `count(slot)` (HistogramSlots positions).
template <class In, class Count>
QL_HD inline void secondPassStrided(const In* x, const StatisticsArgs& a, const HistogramSlots& counters,
                                    std::int64_t thread, std::int64_t threads, Count&& count) {
    const std::int64_t n = a.walk.count;
    if (thread >= n) return;
    Cursor c = Cursor::at(thread, a.walk.map);
    for (std::int64_t i = thread; i < n; i += threads) {
        c.base = a.walk.map.rowStart(c.row);
        const float xi = widen(x[i]);
        const float xh = reconstruction(a, i, c.scaleIndex(a.walk.map));
        if (finite(xi) && finite(xh)) {
            const double e = static_cast<double>(xi) - xh;
            count(HistogramSlots::of(counters.errorAt(), counters.error, a.error.slotOf(e)));
            count(HistogramSlots::of(counters.absErrorAt(), counters.absError,
                                     a.absError.slotOf(e < 0 ? -e : e)));
            count(HistogramSlots::of(counters.valuesAt(), counters.values, a.values.slotOf(xi)));
        }
        c.jump(a.walk.strideRows, a.walk.strideCols, a.walk.map);
    }
}

} // namespace ql::cuda
