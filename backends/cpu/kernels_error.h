// Error sums fused into quantization (included inside kernels_impl.h's ISA namespace). Per element
// this is ErrorStats::addElement: NaN / Inf inputs and non-finite reconstructions are counted apart. The
// products run in fp32 lanes over blocks of at most 1024 elements whose sums are carried in double
// (within 1e-5 of ErrorStats' all-double sums). The lanes only do the common case; a block with a
// non-finite element or fp32 overflow is redone in scalar, and a new worst element is located by
// a second vector look at its block.

inline float hmaxV(vf v) {
    return treeReduce(v, maxOp);
}

// The W lanes' sum, carried in double.
inline double hsumD(vf v) {
    return treeReduce(__builtin_convertvector(v, vdW), addOp);
}

inline std::int64_t hsumI(vi v) {
    return treeReduce(v, addOp);
} // counts of at most kErrorBlock

// ErrorStats::addElement for elements [b, e): the tail, and blocks the lanes cannot take (a NaN or
// Inf input, a non-finite reconstruction, squares beyond fp32).
template <class In>
void errorScalar(const QuantArgs& a, const typename In::T* src, const std::uint8_t* codes, std::int64_t b,
                 std::int64_t e, float scale, float zp, ErrorSums& s, std::int64_t firstIndex) {
    for (std::int64_t j = b; j < e; ++j) {
        const float x = loadOne<In>(src + j);
        const std::int32_t q = a.signedCodes ? static_cast<std::int8_t>(codes[j]) : codes[j];
        s.addElement(x, dequantizeValue(q, scale, zp, *a.plan), firstIndex + j);
    }
}

// Code values back to x̂, in dequantizeValue's order: value = q - zp, then * s, or / s (/ s again).
template <Op O> inline vf fromCodeValue(vf value, vf vs) {
    if constexpr (O == Op::Div || O == Op::Recip)
        return value * vs;
    else if constexpr (O == Op::Mul)
        return value / vs;
    else
        return value / vs / vs;
}

// W one-byte codes back to values.
template <Op O> inline vf reconstruct(const QuantArgs& a, const std::uint8_t* codes, vf vzp, vf vs) {
    vi8 cb;
    std::memcpy(&cb, codes, W);
    const vi q = a.signedCodes ? __builtin_convertvector(cb, vi) : __builtin_convertvector(cb, vi) & 0xFF;
    return fromCodeValue<O>(__builtin_convertvector(q, vf) - vzp, vs);
}

// The first element of a block whose error equals `worst` (the lanes' own arithmetic, so equality
// is exact); vector compares, so a new worst element costs a fraction of the block's first pass.
template <class In, Op O>
std::int64_t findWorst(const QuantArgs& a, const typename In::T* src, const std::uint8_t* codes,
                       std::int64_t b, std::int64_t e, float scale, float zp, float worst) {
    const vf vs = splat(scale), vzp = splat(zp), target = splat(worst);
    for (std::int64_t j = b; j + W <= e; j += W) {
        const vf x = load<In>(src + j);
        const vf xhat = reconstruct<O>(a, codes + j, vzp, vs);
        const vi ok = ((asU(x) & 0x7F800000u) != 0x7F800000u) & ((asU(xhat) & 0x7F800000u) != 0x7F800000u);
        const vi hit = ok & (vabs(x - xhat) == target);
        for (int k = 0; k < W; ++k)
            if (hit[k]) return j + k;
    }
    return -1;
}

constexpr std::int64_t kErrorBlock = 1024; // elements per fp32 lane sum before it is carried in double

// One block's sums in fp32 lanes. No per-lane finiteness masks: a NaN or Inf anywhere makes the
// block's sums non-finite, and such a block is redone by errorScalar.
struct BlockLanes {
    vf sx{}, sh{}, sd{}, se{}, sa{}, maxAe{};
    vi o1{}, o5{};

    void add(vf x, vf xhat) {
        const vf d = x - xhat, ae = vabs(d), ax = vabs(x);
        sx = fmaV(x, x, sx);
        sh = fmaV(xhat, xhat, sh);
        sd = fmaV(x, xhat, sd);
        se = fmaV(d, d, se);
        sa += ae;
        maxAe = maxV(ae, maxAe);
        // Ascend ratio |e| > t|x|; at x = 0 this is "x̂ differs at all", as ErrorStats defines it.
        // Written as a select so AVX-512 adds under the compare's mask.
        o1 = ae > splat(1e-3f) * ax ? o1 + 1 : o1;
        o5 = ae > splat(5e-3f) * ax ? o5 + 1 : o5;
    }
};

// Adds the finished block [b, e) to `s`; false when the lanes cannot take it (a NaN or Inf input, a
// non-finite reconstruction, squares beyond fp32), and the caller redoes it with errorScalar.
template <class In, Op O>
bool commitBlock(const BlockLanes& l, const QuantArgs& a, const typename In::T* src,
                 const std::uint8_t* codes, std::int64_t b, std::int64_t e, float scale, float zp,
                 ErrorSums& s, std::int64_t firstIndex) {
    const double bx = hsumD(l.sx), bh = hsumD(l.sh), bd = hsumD(l.sd), be = hsumD(l.se), ba = hsumD(l.sa);
    const std::int64_t c1 = hsumI(l.o1), c5 = hsumI(l.o5);
    const float blockMax = hmaxV(l.maxAe);
    if (!__builtin_isfinite(bx + bh + be + ba + blockMax) || !__builtin_isfinite(bd)) return false;
    s.count += e - b;
    s.finite += e - b;
    s.sumSqX += bx;
    s.sumSqXhat += bh;
    s.sumDot += bd;
    s.sumSqErr += be;
    s.sumAbsErr += ba;
    s.over1e3 += c1;
    s.over5e3 += c5;
    if (s.worstIndex < 0 || blockMax > s.maxAbsErr) {
        const std::int64_t j = findWorst<In, O>(a, src, codes, b, e, scale, zp, blockMax);
        if (j >= 0) { // always found: the same lanes produced blockMax
            s.maxAbsErr = blockMax;
            s.worstIndex = firstIndex + j;
        }
    }
    return true;
}

// One block of quantMeasuredConst's vector loop, [i, end) in steps of W; returns where it stopped.
// Zp = false: a zero point of 0, whose additions are left out (only a zero's sign could change).
template <class In, Op O, Rounding R, Mode M, bool Zp>
std::int64_t quantMeasuredBlock(const QuantArgs& a, const typename In::T* src, std::int64_t i,
                                std::int64_t end, vf s, vf vs, float zp, std::uint8_t* out,
                                BlockLanes& lanes) {
    const vf zpB = splat(a.zpBefore ? zp : 0.0f), zpA = splat(a.zpBefore ? 0.0f : zp), vzp = splat(zp);
    for (; i + W <= end; i += W) {
        const vf x = load<In>(src + i);
        const vf q = intCodeValues<R, M, Zp>(scaledV<O>(x, s), zpB, zpA, a);
        storeCodes(__builtin_convertvector(q, vi), out + i);
        lanes.add(x, fromCodeValue<O>(Zp ? q - vzp : q, vs));
    }
    return i;
}

// quantConst with the error sums taken from each vector while it is in registers: x̂ comes from the
// clamped code values before they are narrowed to bytes, so the codes are never read back.
template <class In, Op O, Rounding R, Mode M>
void quantMeasuredConst(const QuantArgs& args, const void* srcv, std::int64_t n, float scale, float zp,
                        std::uint8_t* out, ErrorSums* sums, std::int64_t firstIndex) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    const QuantArgs a = args; // as in quantConst
    if (a.zeroScaleGivesZero && scale == 0.0f) {
        quantConst<In, O, R, M>(a, srcv, n, scale, zp, out);
        errorScalar<In>(a, src, out, 0, n, scale, zp, *sums, firstIndex);
        return;
    }
    float mult = scale;
    if constexpr (O == Op::Recip) mult = (a.zeroScaleMeansOne && scale == 0.0f) ? 1.0f : 1.0f / scale;
    const vf s = splat(mult), vs = splat(scale);
    std::int64_t i = 0;
    while (i + W <= n) {
        const std::int64_t blockStart = i, blockEnd = n < i + kErrorBlock ? n : i + kErrorBlock;
        BlockLanes lanes;
        i = zp == 0.0f ? quantMeasuredBlock<In, O, R, M, false>(a, src, i, blockEnd, s, vs, zp, out, lanes)
                       : quantMeasuredBlock<In, O, R, M, true>(a, src, i, blockEnd, s, vs, zp, out, lanes);
        if (!commitBlock<In, O>(lanes, a, src, out, blockStart, i, scale, zp, *sums, firstIndex))
            errorScalar<In>(a, src, out, blockStart, i, scale, zp, *sums, firstIndex);
    }
    for (std::int64_t j = i; j < n; ++j)
        out[j] = static_cast<std::uint8_t>(quantizeValue(loadOne<In>(src + j), scale, zp, *a.plan));
    errorScalar<In>(a, src, out, i, n, scale, zp, *sums, firstIndex);
}

template <class In, Op O, Mode M> QuantMeasuredConstFn pickMeasured(Rounding r) {
    switch (r) {
    case Rounding::HalfToEven:
        return &quantMeasuredConst<In, O, Rounding::HalfToEven, M>;
    case Rounding::HalfAwayFromZero:
        return &quantMeasuredConst<In, O, Rounding::HalfAwayFromZero, M>;
    case Rounding::Floor:
        return &quantMeasuredConst<In, O, Rounding::Floor, M>;
    case Rounding::Ceil:
        return &quantMeasuredConst<In, O, Rounding::Ceil, M>;
    case Rounding::Trunc:
        return &quantMeasuredConst<In, O, Rounding::Trunc, M>;
    }
    return nullptr;
}
