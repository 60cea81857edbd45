// The vector kernels, written once and compiled per ISA: the including file defines QL_KERNEL_NS
// (a distinct namespace per ISA, so the copies never meet under the one-definition rule) and is
// built with that ISA's -m flags. GCC vectors of the ISA's native width lower to its registers, with
// no intrinsics. Every step of code arithmetic is the reference's fp32 operation in the reference's
// order.
// Only out-of-line core functions and builtins are called from here: an inline function or template
// emitted by an AVX-512 file could be the copy the linker keeps for a baseline caller.
#include "cpu/kernels.h"
#include "quant/reference.h"
#include "tensor/float_formats.h"

#include <cstring>
#include <type_traits>
#include <utility>

#ifndef QL_KERNEL_NS
#error "define QL_KERNEL_NS before including kernels_impl.h"
#endif

namespace ql::cpu::QL_KERNEL_NS {

#ifndef QL_KERNEL_WIDTH
#error "define QL_KERNEL_WIDTH (fp32 lanes of the ISA's widest register) before including kernels_impl.h"
#endif
// One native register per vector: wider GCC vectors would be split, and their compares and
// selects scalarised, by ISAs that lack the width.
constexpr int W = QL_KERNEL_WIDTH;
using vf = float __attribute__((vector_size(4 * W)));
using vi = std::int32_t __attribute__((vector_size(4 * W)));
using vu = std::uint32_t __attribute__((vector_size(4 * W)));
using vu16 = std::uint16_t __attribute__((vector_size(2 * W)));
using vi8 = std::int8_t __attribute__((vector_size(W)));

enum class Op { Div, Mul, Recip, Twice };
enum class Mode { IntTorch, IntZero, Float };
struct F32In {
    using T = float;
};
struct Bf16In {
    using T = std::uint16_t;
};
struct F16In {
    using T = std::uint16_t;
};

inline vf splat(float v) {
    return vf{} + v;
}
inline vi splati(std::int32_t v) {
    return vi{} + v;
}
// Same-size GCC vector casts reinterpret the bits (no aliasing through pointers).
inline vf asF(vu u) {
    return (vf)u;
}
inline vu asU(vf f) {
    return (vu)f;
}
inline vi asI(vu u) {
    return (vi)u;
}
inline vu asUi(vi i) {
    return (vu)i;
}
inline vf sel(vi m, vf a, vf b) {
    return m ? a : b;
}

// Half to float, exact for every code: the exponent field is moved into place and a power-of-two
// multiply rebias makes subnormal halves normal floats; Inf/NaN keep their sign and payload.
inline vf halfToFloatV(vu h) {
    const vu sign = (h & 0x8000u) << 16;
    const vu em = h & 0x7FFFu;
    const vf finite = asF(em << 13) * splat(0x1p112f);
    const vu special = sign | 0x7F800000u | ((h & 0x3FFu) << 13);
    return asI(em) >= 0x7C00 ? asF(special) : asF(asU(finite) | sign);
}

// 16-bit lanes widened to 32: into the high half (bf16 -> f32 bits) or zero-extended. From 8 lanes up
// this is one interleave with zeros; GCC's widening convert would split, widen and reinsert halves.
template <bool High, std::size_t... I> inline vu widen16(vu16 h, std::index_sequence<I...>) {
    if constexpr (W < 8) {
        const vu w = __builtin_convertvector(h, vu);
        return High ? w << 16 : w;
    } else if constexpr (High) {
        return (vu)__builtin_shufflevector(vu16{}, h, (I % 2 ? W + I / 2 : 0)...);
    } else {
        return (vu)__builtin_shufflevector(h, vu16{}, (I % 2 ? W : I / 2)...);
    }
}

template <class In> inline vf load(const typename In::T* p) {
    if constexpr (std::is_same_v<In, F32In>) {
        vf v;
        std::memcpy(&v, p, sizeof v);
        return v;
    } else {
        vu16 h;
        std::memcpy(&h, p, sizeof h);
        constexpr bool bf16 = std::is_same_v<In, Bf16In>;
        const vu w = widen16<bf16>(h, std::make_index_sequence<2 * W>{});
        if constexpr (bf16)
            return asF(w);
        else
            return halfToFloatV(w);
    }
}

template <class In> inline float loadOne(const typename In::T* p) {
    if constexpr (std::is_same_v<In, F32In>)
        return *p;
    else if constexpr (std::is_same_v<In, Bf16In>)
        return __builtin_bit_cast(float, static_cast<std::uint32_t>(*p) << 16);
    else
        return halfToFloat(*p);
}

inline vf vabs(vf t) {
    return asF(asU(t) & 0x7FFFFFFFu);
}
inline vf minV(vf a, vf b) {
    return a < b ? a : b;
}
inline vf maxV(vf a, vf b) {
    return a > b ? a : b;
} // NaN a gives b: NaN lanes are overridden later
// Lanes [Off, Off + N) of v, as an N-lane vector.
template <std::size_t Off, class V, std::size_t... I> inline auto lanes(V v, std::index_sequence<I...>) {
    return __builtin_shufflevector(v, v, (Off + I)...);
}

// Combines v's lanes pairwise, halving the width each step: log2(W) vector steps.
template <class V, class Op> inline auto treeReduce(V v, Op op) {
    constexpr std::size_t n = sizeof(V) / sizeof(v[0]);
    if constexpr (n == 1) {
        return v[0];
    } else {
        constexpr auto half = std::make_index_sequence<n / 2>{};
        return treeReduce(op(lanes<0>(v, half), lanes<n / 2>(v, half)), op);
    }
}
constexpr auto minOp = [](auto a, auto b) { return a < b ? a : b; };
constexpr auto maxOp = [](auto a, auto b) { return a > b ? a : b; };

// std::nearbyint & co. for |t| < 2^23; larger magnitudes, Inf and NaN are already integral.
template <Rounding R> inline vf roundV(vf t) {
    const vf a = vabs(t);
    const vi small = a < splat(0x1p23f);
    if constexpr (R == Rounding::HalfToEven) {
        // In [2^23, 2^24) the fp32 spacing is 1, so the add rounds to an integer, ties to even.
        const vf r = asF(asU((a + splat(0x1p23f)) - splat(0x1p23f)) | (asU(t) & 0x80000000u));
        return sel(small, r, t);
    } else {
        const vf safe = sel(small, t, vf{});
        const vf tr = __builtin_convertvector(__builtin_convertvector(safe, vi), vf);
        vf r = tr;
        if constexpr (R == Rounding::Floor) r = tr - sel(tr > t, splat(1.0f), vf{});
        if constexpr (R == Rounding::Ceil) r = tr + sel(tr < t, splat(1.0f), vf{});
        if constexpr (R == Rounding::HalfAwayFromZero) {
            const vf d = t - tr; // exact: t and its integer part share the binade or d is t itself
            const vf one = asF(asU(splat(1.0f)) | (asU(t) & 0x80000000u));
            r = tr + sel(vabs(d) >= splat(0.5f), one, vf{});
        }
        return sel(small, r, t);
    }
}

template <Op O> inline vf scaledV(vf x, vf s) {
    if constexpr (O == Op::Div)
        return x / s;
    else if constexpr (O == Op::Twice)
        return (x * s) * s; // A2/A3 kernel order
    else
        return x * s; // Mul and Recip (s is already 1/scale)
}

// Integer codes from t (already scaled), as exact fp32 values; zpB / zpA are the zero point before
// / after rounding (the other one is 0, which changes no code: only the sign of a zero). Zp = false
// leaves both additions out, for a zero point of 0 (again only a zero's sign could change).
template <Rounding R, Mode M, bool Zp = true>
inline vf intCodeValues(vf t, vf zpB, vf zpA, const QuantArgs& a) {
    if constexpr (Zp) t = t + zpB;
    vf r;
    if constexpr (R == Rounding::HalfToEven) {
        // (t + 1.5*2^23) - 1.5*2^23 is nearbyint for |t| < 2^22. Beyond that it stays within a few
        // ulp of t: far outside every vector target's code range (|q| <= 255), and exact near the
        // int64 limits torch's cast tests, so the clamped code is the reference's.
        r = (t + splat(0x1.8p23f)) - splat(0x1.8p23f);
    } else {
        r = roundV<R>(t);
    }
    vf sum = r;
    if constexpr (Zp) sum = r + zpA;
    const vf lo = splat(a.qmin), hi = splat(a.qmax);
    const vf clamped = minV(maxV(sum, lo), hi);
    if constexpr (M == Mode::IntTorch) {
        // torch: (int64)(zp + r); out of int64 range (NaN, ±Inf, |sum| >= 2^63) x86 gives INT64_MIN -> qmin.
        // NaN and the negatives already clamp to qmin (maxV(NaN, lo) is lo): only the positives remain.
        return sel(sum >= splat(0x1p63f), lo, clamped);
    } else {
        const vi nan = r != r;
        const float zeroCode = 0.0f < a.qmin ? a.qmin : (0.0f > a.qmax ? a.qmax : 0.0f);
        return sel(nan, splat(zeroCode), clamped);
    }
}

template <Rounding R, Mode M> inline vi intCodes(vf t, vf zpB, vf zpA, const QuantArgs& a) {
    return __builtin_convertvector(intCodeValues<R, M>(t, zpB, zpA, a), vi); // integral: exact
}

// OCP mini-float encode (RNE, subnormals kept). |t| is first clamped to 2^20, above every format's
// overflow (Inf and NaN land there too), so all exponents below stay in range. y = |t| / quantum is
// exact and rounded by the 2^23 trick; the magnitude code is ((E + bias - 1) << m) + n, which also
// covers the carry into the next binade. Codes grow with the value, so "rounded value > max finite"
// is "magnitude code > the max finite's code".
// floatCodes' constants, made once per call from the format, outside the loops.
struct FloatFormat {
    explicit FloatFormat(const QuantArgs& a)
        : bias(a.bias)
        , mantBits(a.mantBits)
        , minExponent(splati(128 - a.bias))
        , maxMag(splati(a.maxMag))
        , ovfPos(splati(a.ovfPos))
        , signMask(splati(a.signMask))
        , nanPos(splati(a.nanPos))
        , nanNeg(splati(a.nanNeg)) {}
    int bias, mantBits;
    vi minExponent, maxMag, ovfPos, signMask, nanPos, nanNeg;
};

inline vi floatCodes(vf t, const FloatFormat& f) {
    const vi neg = asI(asU(t)) < 0;
    const vi nan = t != t;
    const vf ab = minV(vabs(t), splat(0x1p20f)); // NaN -> 2^20: replaced by the NaN code at the end
    const vi eb = asI(asU(ab) >> 23);            // biased exponent, sign already cleared
    const vi E = eb > f.minExponent ? eb : f.minExponent;
    const vf up = asF(asUi((254 + f.mantBits - E) << 23)); // 2^-(quantum exponent)
    const vf n = ((ab * up) + splat(0x1p23f)) - splat(0x1p23f);
    const vi mag = ((E + (f.bias - 128)) << f.mantBits) + __builtin_convertvector(n, vi);
    const vi clipped = mag > f.maxMag ? f.ovfPos : mag;
    const vi code = clipped | (neg & f.signMask);
    return nan ? (neg ? f.nanNeg : f.nanPos) : code;
}

template <std::size_t... I> inline vi8 lowBytes(vi c, std::index_sequence<I...>) {
    using vb = std::int8_t __attribute__((vector_size(4 * W)));
    return __builtin_shufflevector((vb)c, (vb)c, (4 * I)...);
}

// Each lane's low byte (a truncation, as static_cast to a byte). AVX-512 narrows in one instruction;
// elsewhere GCC would scalarise a narrowing convert, so the bytes are picked by one shuffle.
inline void storeCodes(vi c, std::uint8_t* out) {
#if defined(__AVX512F__)
    const vi8 b = __builtin_convertvector(c, vi8);
#else
    const vi8 b = lowBytes(c, std::make_index_sequence<W>{});
#endif
    std::memcpy(out, &b, W);
}

// n elements with one scale and zero point; `a` is the caller's local copy (byte stores may alias
// the arguments, which would force reloads per vector), `format` made once by the caller. Whole: n
// is a multiple of W, so there is no scalar tail (a call) and a zero scale that gives zero codes is
// a select, not a memset: across a run of blocks the constants then stay in registers.
template <class In, Op O, Rounding R, Mode M, bool Whole = false>
[[gnu::always_inline]] inline void quantRun(const QuantArgs& a, const FloatFormat& format,
                                            const typename In::T* src, std::int64_t n, float scale, float zp,
                                            std::uint8_t* out) {
    const bool zeroed = a.zeroScaleGivesZero && scale == 0.0f;
    if constexpr (!Whole) {
        if (zeroed) {
            std::memset(out, 0, static_cast<std::size_t>(n));
            return;
        }
    }
    float mult = scale;
    if constexpr (O == Op::Recip) mult = (a.zeroScaleMeansOne && scale == 0.0f) ? 1.0f : 1.0f / scale;
    const vf s = splat(mult);
    const vf zpB = splat(a.zpBefore ? zp : 0.0f), zpA = splat(a.zpBefore ? 0.0f : zp);
    const vi keep = splati(zeroed ? 0 : -1);
    std::int64_t i = 0;
    for (; i + W <= n; i += W) {
        const vf t = scaledV<O>(load<In>(src + i), s);
        vi c;
        if constexpr (M == Mode::Float)
            c = floatCodes(t, format);
        else
            c = intCodes<R, M>(t, zpB, zpA, a);
        if constexpr (Whole) c &= keep;
        storeCodes(c, out + i);
    }
    if constexpr (!Whole)
        for (; i < n; ++i)
            out[i] = static_cast<std::uint8_t>(quantizeValue(loadOne<In>(src + i), scale, zp, *a.plan));
}

template <class In, Op O, Rounding R, Mode M>
void quantConst(const QuantArgs& args, const void* srcv, std::int64_t n, float scale, float zp,
                std::uint8_t* out) {
    const QuantArgs a = args;
    quantRun<In, O, R, M>(a, FloatFormat(a), static_cast<const typename In::T*>(srcv), n, scale, zp, out);
}

// Consecutive groups of `length` elements each, as quantConst would take them one by one: one call
// for a run of MX or NVFP4 blocks (a call per 16-element block cost more than its arithmetic), whole
// registers per block where the length allows (MX and NVFP4 blocks are 32 and 16).
template <class In, Op O, Rounding R, Mode M>
void quantBlocks(const QuantArgs& args, const void* srcv, std::int64_t groups, std::int64_t length,
                 const float* scales, const float* zps, std::uint8_t* out) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    const QuantArgs a = args;
    const FloatFormat format(a);
    auto each = [&](auto whole) {
        for (std::int64_t g = 0; g < groups; ++g)
            quantRun<In, O, R, M, decltype(whole)::value>(a, format, src + g * length, length, scales[g],
                                                          zps[g], out + g * length);
    };
    if (length % W == 0)
        each(std::true_type{});
    else
        each(std::false_type{});
}

template <class In, Op O, Rounding R, Mode M>
void quantPerElem(const QuantArgs& args, const void* srcv, std::int64_t n, const float* scales,
                  const float* zps, std::uint8_t* out) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    const QuantArgs a = args; // as in quantConst
    const FloatFormat format(a);
    std::int64_t i = 0;
    for (; i + W <= n; i += W) {
        vf s, zp;
        std::memcpy(&s, scales + i, sizeof s);
        std::memcpy(&zp, zps + i, sizeof zp);
        vf mult = s;
        if constexpr (O == Op::Recip) {
            const vf inv = splat(1.0f) / s;
            mult = a.zeroScaleMeansOne ? sel(s == vf{}, splat(1.0f), inv) : inv;
        }
        const vf t = scaledV<O>(load<In>(src + i), mult);
        vi c;
        if constexpr (M == Mode::Float)
            c = floatCodes(t, format);
        else
            c = a.zpBefore ? intCodes<R, M>(t, zp, vf{}, a) : intCodes<R, M>(t, vf{}, zp, a);
        if (a.zeroScaleGivesZero) c = (s == vf{}) ? vi{} : c;
        storeCodes(c, out + i);
    }
    for (; i < n; ++i)
        out[i] = static_cast<std::uint8_t>(quantizeValue(loadOne<In>(src + i), scales[i], zps[i], *a.plan));
}

// Finite range, as ql::calibrate's groupRanges: Inf never widens it, NaN is only flagged.
template <class In> void rangeConst(const void* srcv, std::int64_t n, float* lo, float* hi, bool* nan) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    vf vlo = splat(*lo), vhi = splat(*hi);
    vi vnan{};
    std::int64_t i = 0;
    for (; i + W <= n; i += W) {
        const vf x = load<In>(src + i);
        const vu mag = asU(x) & 0x7FFFFFFFu;
        const vf v = sel(mag < 0x7F800000u, x, vf{});
        vnan |= mag > 0x7F800000u;
        vlo = v < vlo ? v : vlo;
        vhi = v > vhi ? v : vhi;
    }
    // Tree reductions: log2(W) vector steps instead of W scalar ones (this runs once per group, so
    // it matters for g128).
    *lo = treeReduce(vlo, minOp);
    *hi = treeReduce(vhi, maxOp);
    *nan = *nan || treeReduce(vnan, [](auto a, auto b) { return a | b; });
    for (; i < n; ++i) {
        const float v = loadOne<In>(src + i);
        if (__builtin_isnan(v)) *nan = true;
        if (!__builtin_isfinite(v)) continue;
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
}

// One block's finite |x| maximum, as max(|lo|, |hi|) of its finite range: magnitudes compare as
// integers, Inf and NaN count as 0, and a block holding a NaN gets its maximum negated (-0 when it
// is 0), as calib::absMaxOfBlocks reports it for the oracle's rule.
template <class In> inline float absMaxBlock(const typename In::T* b, std::int64_t length) {
    const std::int64_t whole = length / W * W;
    vi top{}, nans{}; // magnitudes are below 2^31: signed compares order them
    for (std::int64_t i = 0; i < whole; i += W) {
        const vi mag = asI(asU(load<In>(b + i)) & 0x7FFFFFFFu);
        top = ((mag < 0x7F800000) & (mag > top)) ? mag : top;
        nans |= mag > 0x7F800000;
    }
    std::int32_t m = treeReduce(top, maxOp);
    bool seen = treeReduce(nans, [](auto x, auto y) { return x | y; }) != 0;
    for (std::int64_t i = whole; i < length; ++i) {
        const std::int32_t mag = __builtin_bit_cast(std::int32_t, loadOne<In>(b + i)) & 0x7FFFFFFF;
        seen = seen || mag > 0x7F800000;
        if (mag < 0x7F800000 && mag > m) m = mag;
    }
    return __builtin_bit_cast(float, seen ? m | std::int32_t{-0x7FFFFFFF - 1} : m);
}

// Lane t of the half (upper when Hi) that folding x and y keeps: x and y each hold W / S partial
// blocks of S lanes; the result holds x's blocks then y's, S / 2 lanes each.
template <int S, bool Hi> constexpr int foldLane(int t) {
    const int k = W / S, block = t / (S / 2), offset = t % (S / 2) + (Hi ? S / 2 : 0);
    return block < k ? block * S + offset : W + (block - k) * S + offset;
}
template <int S, std::size_t... T> inline vi foldPair(vi x, vi y, std::index_sequence<T...>) {
    const vi lo = __builtin_shufflevector(x, y, foldLane<S, false>(T)...);
    const vi hi = __builtin_shufflevector(x, y, foldLane<S, true>(T)...);
    return lo > hi ? lo : hi;
}
// W per-block vectors (S lanes per block, `count` of them) folded into one vector whose lane j is
// block j's maximum: log2(W) levels of two shuffles and a max per pair, instead of a tree per block.
template <int S> inline vi foldBlocks(vi* v, int count) {
    if constexpr (S == 1) {
        return v[0];
    } else {
        for (int i = 0; i < count / 2; ++i)
            v[i] = foldPair<S>(v[2 * i], v[2 * i + 1], std::make_index_sequence<W>{});
        return foldBlocks<S / 2>(v, count / 2);
    }
}

// Each block's finite |x| maximum (absMaxBlock) for a run of blocks. Blocks whose length is a whole
// number of vectors go W at a time, their magnitudes folded across blocks at once; a batch holding
// a NaN or Inf is measured again block by block.
template <class In>
void absMaxBlocks(const void* srcv, std::int64_t groups, std::int64_t length, float* amax) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    std::int64_t g = 0;
    if (length % W == 0) {
        for (; g + W <= groups; g += W) {
            vi top[W];
            for (int j = 0; j < W; ++j) {
                const auto* b = src + (g + j) * length;
                top[j] = vi{};
                for (std::int64_t i = 0; i < length; i += W) {
                    const vi mag = asI(asU(load<In>(b + i)) & 0x7FFFFFFFu);
                    top[j] = mag > top[j] ? mag : top[j];
                }
            }
            const vi m = foldBlocks<W>(top, W); // Inf and NaN included, as the largest magnitudes
            if (treeReduce(m, maxOp) < 0x7F800000) {
                std::memcpy(amax + g, &m, sizeof m);
                continue;
            }
            for (int j = 0; j < W; ++j)
                amax[g + j] = absMaxBlock<In>(src + (g + j) * length, length);
        }
    }
    for (; g < groups; ++g)
        amax[g] = absMaxBlock<In>(src + g * length, length);
}

// An E4M3 magnitude code's value, exactly: normal codes put exponent and mantissa in place,
// subnormals are m * 2^-9. (0x7F, NaN, never reaches it: saturating encodes of finite values stop at
// 0x7E.)
inline vf e4m3Value(vi code) {
    const vi e = (code >> 3) & 15, m = code & 7;
    const vf normal = asF(asUi(((e + 120) << 23) | (m << 20)));
    const vf sub = __builtin_convertvector(m, vf) * splat(0x1p-9f);
    return sel(e == 0, sub, normal);
}

void nvfp4Scales(const QuantArgs& e4m3, const float* amax, std::int64_t n, float tensorScale,
                 std::uint8_t* codes, float* scales) {
    const QuantArgs a = e4m3; // (stores may alias the arguments)
    const FloatFormat format(a);
    const vf six = splat(6.0f), sg = splat(tensorScale);
    auto lanes = [&](const float* in, std::uint8_t* c, float* s) {
        vf m;
        std::memcpy(&m, in, sizeof m);
        const vi code = floatCodes((vabs(m) / six) / sg, format); // the reference's two divisions
        storeCodes(code, c);
        const vf v = e4m3Value(code) * sg;
        std::memcpy(s, &v, sizeof v);
    };
    std::int64_t i = 0;
    for (; i + W <= n; i += W)
        lanes(amax + i, codes + i, scales + i);
    if (i == n) return;
    // The tail through one padded vector, so every block takes the same arithmetic.
    float in[W] = {}, s[W];
    std::uint8_t c[W];
    const auto rest = static_cast<std::size_t>(n - i);
    std::memcpy(in, amax + i, rest * sizeof(float));
    lanes(in, c, s);
    std::memcpy(codes + i, c, rest);
    std::memcpy(scales + i, s, rest * sizeof(float));
}

template <class In>
void rangePerElem(const void* srcv, std::int64_t n, float* lo, float* hi, std::uint8_t* nan) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    for (std::int64_t i = 0; i < n; ++i) {
        const float x = loadOne<In>(src + i);
        const bool finite = __builtin_isfinite(x);
        const float v = finite ? x : 0.0f;
        lo[i] = v < lo[i] ? v : lo[i];
        hi[i] = v > hi[i] ? v : hi[i];
        nan[i] |= static_cast<std::uint8_t>(__builtin_isnan(x));
    }
}

// Template selection: one instantiation per (input, scale op, rounding, code mode).
template <class In, Op O, Mode M> KernelSet pickRounding(Rounding r) {
    KernelSet k;
    if constexpr (M == Mode::Float) {
        (void)r;
        k.quantConst = &quantConst<In, O, Rounding::HalfToEven, M>;
        k.quantBlocks = &quantBlocks<In, O, Rounding::HalfToEven, M>;
        k.quantPerElem = &quantPerElem<In, O, Rounding::HalfToEven, M>;
    } else {
        switch (r) {
#define QL_ROUNDING_CASE(R)                                                                                  \
    case Rounding::R:                                                                                        \
        k.quantConst = &quantConst<In, O, Rounding::R, M>;                                                   \
        k.quantBlocks = &quantBlocks<In, O, Rounding::R, M>;                                                 \
        k.quantPerElem = &quantPerElem<In, O, Rounding::R, M>;                                               \
        break;
            QL_ROUNDING_CASE(HalfToEven)
            QL_ROUNDING_CASE(HalfAwayFromZero)
            QL_ROUNDING_CASE(Floor)
            QL_ROUNDING_CASE(Ceil)
            QL_ROUNDING_CASE(Trunc)
#undef QL_ROUNDING_CASE
        }
    }
    return k;
}

template <class In, Op O> KernelSet pickMode(const ResolvedSpec& plan) {
    const Convention& c = plan.convention;
    if (isFloatTarget(plan.codeTarget)) return pickRounding<In, O, Mode::Float>(c.rounding);
    if (c.nan == NanPolicy::X86IntCast) return pickRounding<In, O, Mode::IntTorch>(c.rounding);
    return pickRounding<In, O, Mode::IntZero>(c.rounding);
}

template <class In> KernelSet pickOp(const ResolvedSpec& plan) {
    KernelSet k;
    if (plan.codeTarget != Target::Int32) { // 32-bit codes exceed fp32's exact integers: scalar path
        switch (plan.convention.scaleOp) {
        case ScaleOp::Divide:
            k = pickMode<In, Op::Div>(plan);
            break;
        case ScaleOp::MultiplyReciprocal:
            k = pickMode<In, Op::Recip>(plan);
            break;
        case ScaleOp::Multiply:
            k = pickMode<In, Op::Mul>(plan);
            break;
        case ScaleOp::MultiplyTwice:
            k = pickMode<In, Op::Twice>(plan);
            break;
        }
    }
    k.rangeConst = &rangeConst<In>;
    k.absMaxBlocks = &absMaxBlocks<In>;
    k.nvfp4Scales = &nvfp4Scales;
    k.rangePerElem = &rangePerElem<In>;
    return k;
}

inline KernelSet pick(const ResolvedSpec& plan, DType dtype) {
    switch (dtype) {
    case DType::F32:
        return pickOp<F32In>(plan);
    case DType::BF16:
        return pickOp<Bf16In>(plan);
    case DType::F16:
        return pickOp<F16In>(plan);
    default:
        return {};
    }
}

} // namespace ql::cpu::QL_KERNEL_NS
