#pragma once
// The range kernel's body: each scale group's finite range [min(0, x), max(0, x)] (Inf never widens
// it, NaN is skipped, as calibrate's groupRanges and the cpu backend's range pass), measured on the
// device from the uploaded input so that absmax and minmax need no pass over the data on the host.
// Ranges are kept as ordered keys (rangeKey), so integer min / max, the warp's reductions and the
// device's atomics order floats and the result does not depend on the grid or the order of the
// atomics. As in cuda_walk.h, the body is a function of (thread, thread count), so tst_cuda_walk
// runs it on the host for several emulated grids.
#include "cuda/cuda_walk.h"

#include <cstdint>

namespace ql::cuda {

/// A finite float as a signed key in the same order; +0 (and -0) is 0, so zeroed memory is the
/// empty range [0, 0].
QL_HD inline std::int32_t rangeKey(float v) {
    const std::uint32_t b = bitsOf(v);
    const auto magnitude = static_cast<std::int32_t>(b & 0x7FFFFFFFu);
    return (b & 0x80000000u) ? -magnitude : magnitude;
}

QL_HD inline float fromRangeKey(std::int32_t k) {
    return k < 0 ? floatOf(static_cast<std::uint32_t>(-k) | 0x80000000u)
                 : floatOf(static_cast<std::uint32_t>(k));
}

/// Widens `lo` / `hi` by one element (non-finite elements leave them as they are).
QL_HD inline void addToRange(float x, std::int32_t& lo, std::int32_t& hi) {
    if ((bitsOf(x) & 0x7FFFFFFFu) >= 0x7F800000u) return;
    const std::int32_t k = rangeKey(x);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
}

/// The work of thread `thread` of `threads` (a multiple of the warp width), lane `lane` of its warp.
/// Every lane of a warp runs the same iterations, so `combine(valid, group, lo, hi)` may reduce
/// across the warp; lanes past the end pass valid = false and the empty range. Thread 0 also
/// takes the scalar tail, one element at a time, through `single(group, lo, hi)`. Only for layouts
/// whose vectors share a scale (vectorsShareScale) with `a` configured for this grid.
template <class In, class Combine, class Single>
QL_HD inline void rangeStrided(const In* x, const QuantizeArgs& a, std::int64_t thread, std::int64_t threads,
                               int lane, Combine&& combine, Single&& single) {
    constexpr int V = kVectorWidth<In>;
    const std::int64_t vectors = a.count / V;
    const std::int64_t first = thread - lane;
    if (first < vectors) {
        // Where this lane starts; the row's first scale is read only for positions in the tensor.
        const std::int64_t flat = thread * V;
        Cursor c{flat / a.map.inner, flat % a.map.inner, 0};
        for (std::int64_t w = first; w < vectors; w += threads) {
            const std::int64_t v = w + lane;
            const bool valid = v < vectors;
            std::int32_t lo = 0, hi = 0;
            std::int64_t group = -1;
            if (valid) {
                c.base = a.map.rowStart(c.row);
                group = c.scaleIndex(a.map);
                const RawVector in = loadPack<RawVector>(x + v * V);
                for (int k = 0; k < V; ++k)
                    addToRange(widen(elementOf<In>(in, k)), lo, hi);
            }
            combine(valid, group, lo, hi);
            c.jump(a.strideRows, a.strideCols, a.map);
        }
    }
    if (thread != 0 || vectors * V == a.count) return;
    Cursor e = Cursor::at(vectors * V, a.map);
    for (std::int64_t i = vectors * V; i < a.count; ++i) {
        std::int32_t lo = 0, hi = 0;
        addToRange(widen(x[i]), lo, hi);
        single(e.scaleIndex(a.map), lo, hi);
        e.next(a.map);
    }
}

} // namespace ql::cuda
