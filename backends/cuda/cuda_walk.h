#pragma once
// The quantize kernel's body, as a function of (thread, thread count) so that tst_cuda_walk can
// run it on the host for a few emulated grids and compare the codes with quantizeReference. Each
// thread takes every `threads`-th vector of V elements (16 bytes of input: four floats or eight
// 16-bit values in one load), coalesced across a warp; thread 0 also does the scalar tail of
// count % V elements.
#include "cuda/cuda_element.h"
#include "cuda/cuda_scale_map.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ql::cuda {

enum class ZeroPointMode : std::uint8_t {
    None,     // symmetric: 0
    Scalar,   // one value for the whole tensor (npu_group_quant offset)
    PerGroup, // one per scale
};

/// Everything one launch reads besides the input and code pointers; trivially copyable.
struct QuantizeArgs {
    ElementOp op;
    ScaleMapView map;
    const float* scales;
    const float* zeroPoints;
    ZeroPointMode zeroPointMode;
    std::int64_t count;
    // Set by configureLaunch(): one grid stride (threads * V elements) as whole rows plus columns,
    // and whether every vector lies in one scale group (then its scale is looked up once).
    std::int64_t strideRows;
    std::int64_t strideCols;
    bool vectorsShareScale;
};

/// Input elements per vector: 16 bytes.
template <class In> constexpr int kVectorWidth = static_cast<int>(16 / sizeof(In));

/// Whether every aligned vector of `width` elements lies in one scale group.
inline bool vectorsShareScale(const ScaleMapView& m, int width) {
    const bool oneScale = m.rowRule == RowRule::Zero && m.columnRule == ColumnRule::Shared;
    // Rows of whole vectors, and a column rule that is constant over each aligned vector.
    const bool rowAligned = m.inner % width == 0;
    const bool columnsShare = m.columnRule == ColumnRule::Shared ||
                              (m.columnRule == ColumnRule::Block && m.block.divisor % width == 0);
    return oneScale || (rowAligned && columnsShare);
}

/// Fills in what depends on the grid (`threads` threads) and the vector width.
inline void configureLaunch(QuantizeArgs& a, std::int64_t threads, int width) {
    const std::int64_t elements = threads * width;
    a.strideRows = elements / a.map.inner;
    a.strideCols = elements % a.map.inner;
    a.vectorsShareScale = vectorsShareScale(a.map, width);
}

template <class T, int N> struct alignas(sizeof(T) * N >= 16 ? 16 : sizeof(T) * N) Pack { T v[N]; };

template <class P, class T> QL_HD inline P loadPack(const T* p) {
#if defined(__CUDA_ARCH__)
    return *reinterpret_cast<const P*>(p); // one 16-byte load: the buffer is cudaMalloc-aligned
#else
    P out;
    std::memcpy(&out, p, sizeof out);
    return out;
#endif
}

template <class P, class T> QL_HD inline void storePack(T* p, const P& v) {
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<P*>(p) = v;
#else
    std::memcpy(p, &v, sizeof v);
#endif
}

/// 16 bytes of input as loaded: four words, read out as V elements without going through memory.
using RawVector = Pack<std::uint32_t, 4>;

template <class In> QL_HD inline In elementOf(const RawVector& raw, int k) {
    if constexpr (std::is_same_v<In, float>) {
        return floatOf(raw.v[k]);
    } else { // little-endian: element 2j is the low half of word j
        return In{static_cast<std::uint16_t>(raw.v[k >> 1] >> ((k & 1) * 16))};
    }
}

QL_HD inline float zeroPointAt(std::int64_t s, const QuantizeArgs& a) {
    return a.zeroPointMode == ZeroPointMode::None     ? 0.0f
           : a.zeroPointMode == ZeroPointMode::Scalar ? a.zeroPoints[0]
                                                      : a.zeroPoints[s];
}

template <ScaleOp Op, class Code, class In>
QL_HD inline Code codeAt(In x, const Cursor& c, const QuantizeArgs& a) {
    const std::int64_t s = c.scaleIndex(a.map);
    // int8 codes are stored as their byte, as Codes::set does.
    return static_cast<Code>(quantizeElementAs<Op>(widen(x), a.scales[s], zeroPointAt(s, a), a.op));
}

/// The work of thread `thread` of `threads`; `Code` is std::uint8_t, or std::int32_t for int32 codes.
/// The next vector is loaded before the current one is computed, so two loads per thread are in
/// flight: streaming needs the bytes in flight more than it needs occupancy.
template <ScaleOp Op, class In, class Code>
QL_HD inline void quantizeStrided(const In* x, Code* out, const QuantizeArgs& a, std::int64_t thread,
                                  std::int64_t threads) {
    constexpr int V = kVectorWidth<In>;
    const std::int64_t vectors = a.count / V;
    if (thread < vectors) {
        std::int64_t v = thread;
        Cursor c = Cursor::at(v * V, a.map);
        RawVector in = loadPack<RawVector>(x + v * V);
        for (;;) {
            const bool more = v + threads < vectors;
            RawVector ahead{};
            if (more) ahead = loadPack<RawVector>(x + (v + threads) * V);
            Pack<Code, V> q;
            if (a.vectorsShareScale) { // one lookup and one operand per vector
                const std::int64_t s = c.scaleIndex(a.map);
                const float scale = a.scales[s], zp = zeroPointAt(s, a);
                const float operand = scaleOperand<Op>(scale, a.op.zeroScaleMeansOne);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
                for (int k = 0; k < V; ++k)
                    q.v[k] = static_cast<Code>(
                        quantizePrepared<Op>(widen(elementOf<In>(in, k)), scale, operand, zp, a.op));
            } else {
                Cursor e = c; // vectors may cross rows and groups: step element by element
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
                for (int k = 0; k < V; ++k) {
                    q.v[k] = codeAt<Op, Code>(elementOf<In>(in, k), e, a);
                    e.next(a.map);
                }
            }
            storePack(out + v * V, q);
            if (!more) break;
            v += threads;
            in = ahead;
            c.jump(a.strideRows, a.strideCols, a.map);
            c.base = a.map.rowStart(c.row);
        }
    }
    if (thread != 0 || vectors * V == a.count) return;
    Cursor e = Cursor::at(vectors * V, a.map);
    for (std::int64_t i = vectors * V; i < a.count; ++i) {
        out[i] = codeAt<Op, Code>(x[i], e, a);
        e.next(a.map);
    }
}

/// Calls fn(std::integral_constant<ScaleOp, op>{}): one instantiation per scale operation.
template <class Fn> inline void withScaleOp(ScaleOp op, Fn&& fn) {
    switch (op) {
    case ScaleOp::Divide:
        return fn(std::integral_constant<ScaleOp, ScaleOp::Divide>{});
    case ScaleOp::MultiplyReciprocal:
        return fn(std::integral_constant<ScaleOp, ScaleOp::MultiplyReciprocal>{});
    case ScaleOp::Multiply:
        return fn(std::integral_constant<ScaleOp, ScaleOp::Multiply>{});
    case ScaleOp::MultiplyTwice:
        return fn(std::integral_constant<ScaleOp, ScaleOp::MultiplyTwice>{});
    }
}

} // namespace ql::cuda
