// Fused error sums (included inside kernels_impl.h's ISA namespace). Per element this is
// ErrorStats::addElement: NaN / Inf inputs and non-finite reconstructions are counted apart. The
// products run in fp32 lanes over blocks of at most 1024 elements whose sums are carried in double
// (within 1e-5 of ErrorStats' all-double sums). The lanes only do the common case; a block with a
// non-finite element or fp32 overflow is redone in scalar, and a new worst element is located by
// a second vector look at its block.

inline float hmaxV(vf v) {
    v = maxV(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    v = maxV(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
    v = maxV(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
    return v[0] > v[1] ? v[0] : v[1];
}

// ErrorStats::addElement for elements [b, e): the tail, and blocks the lanes cannot take (a NaN or
// Inf input, a non-finite reconstruction, squares beyond fp32).
template <class In>
void errorScalar(const QuantArgs& a, const typename In::T* src, const std::uint8_t* codes, std::int64_t b,
                 std::int64_t e, float scale, float zp, ErrorSums& s, std::int64_t firstIndex) {
    for (std::int64_t j = b; j < e; ++j) {
        const float x = loadOne<In>(src + j);
        const std::int32_t q = a.signedCodes ? static_cast<std::int8_t>(codes[j]) : codes[j];
        const float xhat = dequantizeValue(q, scale, zp, *a.plan);
        ++s.count;
        if (__builtin_isnan(x)) { ++s.nanX; continue; }
        if (__builtin_isinf(x)) { ++s.infX; continue; }
        if (!__builtin_isfinite(xhat)) { ++s.nonFiniteXhat; continue; }
        ++s.finite;
        const double xd = x, hd = xhat, d = xd - hd, ae = __builtin_fabs(d), absX = __builtin_fabs(xd);
        s.sumSqX += xd * xd;
        s.sumSqXhat += hd * hd;
        s.sumDot += xd * hd;
        s.sumSqErr += d * d;
        s.sumAbsErr += ae;
        const float aef = __builtin_fabsf(x - xhat); // the lanes' measure, so ties resolve alike
        if (aef > s.maxAbsErr || s.worstIndex < 0) {
            s.maxAbsErr = aef;
            s.worstIndex = firstIndex + j;
        }
        s.over1e3 += ae > 1e-3 * absX;
        s.over5e3 += ae > 5e-3 * absX;
    }
}

// W one-byte codes back to values, in dequantizeValue's order: (q - zp) * s, or / s (/ s again).
template <Op O>
inline vf reconstruct(const QuantArgs& a, const std::uint8_t* codes, vf vzp, vf vs) {
    vi8 cb;
    std::memcpy(&cb, codes, W);
    const vi q = a.signedCodes ? __builtin_convertvector(cb, vi) : __builtin_convertvector(cb, vi) & 0xFF;
    const vf value = __builtin_convertvector(q, vf) - vzp;
    if constexpr (O == Op::Div || O == Op::Recip) return value * vs;
    else if constexpr (O == Op::Mul) return value / vs;
    else return value / vs / vs;
}

// The first element of a block whose error equals `worst` (the lanes' own arithmetic, so equality
// is exact); vector compares, so a new worst element costs a fraction of the block's first pass.
template <class In, Op O>
std::int64_t findWorst(const QuantArgs& a, const typename In::T* src, const std::uint8_t* codes, std::int64_t b,
                       std::int64_t e, float scale, float zp, float worst) {
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

template <class In, Op O>
void errorConst(const QuantArgs& a, const void* srcv, const std::uint8_t* codes, std::int64_t n, float scale,
                float zp, ErrorSums* out, std::int64_t firstIndex) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    ErrorSums& s = *out;
    const vf vs = splat(scale), vzp = splat(zp);
    std::int64_t i = 0;
    while (i + W <= n) {
        const std::int64_t blockStart = i;
        const std::int64_t blockEnd = n < i + 1024 ? n : i + 1024;
        // No per-lane finiteness masks: a NaN or Inf anywhere makes the block's sums non-finite,
        // and such a block is redone by errorScalar.
        vf sx{}, sh{}, sd{}, se{}, sa{}, maxAe{};
        vi o1{}, o5{};
        for (; i + W <= blockEnd; i += W) {
            const vf x = load<In>(src + i);
            const vf xhat = reconstruct<O>(a, codes + i, vzp, vs);
            const vf d = x - xhat, ae = vabs(d), ax = vabs(x);
            sx += x * x;
            sh += xhat * xhat;
            sd += x * xhat;
            se += d * d;
            sa += ae;
            maxAe = maxV(ae, maxAe);
            // Ascend ratio |e| > t|x|; at x = 0 this is "x̂ differs at all", as ErrorStats defines it.
            o1 -= ae > splat(1e-3f) * ax;
            o5 -= ae > splat(5e-3f) * ax;
        }
        double bx = 0, bh = 0, bd = 0, be = 0, ba = 0;
        std::int64_t c1 = 0, c5 = 0;
        for (int k = 0; k < W; ++k) {
            bx += sx[k];
            bh += sh[k];
            bd += sd[k];
            be += se[k];
            ba += sa[k];
            c1 += o1[k];
            c5 += o5[k];
        }
        const float blockMax = hmaxV(maxAe);
        if (!__builtin_isfinite(bx + bh + be + ba + blockMax) || !__builtin_isfinite(bd)) {
            errorScalar<In>(a, src, codes, blockStart, i, scale, zp, s, firstIndex);
            continue;
        }
        s.count += i - blockStart;
        s.finite += i - blockStart;
        s.sumSqX += bx;
        s.sumSqXhat += bh;
        s.sumDot += bd;
        s.sumSqErr += be;
        s.sumAbsErr += ba;
        s.over1e3 += c1;
        s.over5e3 += c5;
        if (s.worstIndex < 0 || blockMax > s.maxAbsErr) {
            const std::int64_t j = findWorst<In, O>(a, src, codes, blockStart, i, scale, zp, blockMax);
            if (j >= 0) { // always found: the same lanes produced blockMax
                s.maxAbsErr = blockMax;
                s.worstIndex = firstIndex + j;
            }
        }
    }
    errorScalar<In>(a, src, codes, i, n, scale, zp, s, firstIndex);
}
