// Fused error sums (included inside kernels_impl.h's ISA namespace). Per element this is
// ErrorStats::addElement: NaN / Inf inputs and non-finite reconstructions are counted apart. The
// products run in fp32 lanes over blocks of at most 1024 elements whose sums are carried in double
// (within 1e-5 of ErrorStats' all-double sums). The lanes only track what is common; the rare
// cases (a non-finite element, a new worst element, fp32 overflow) rescan their block in scalar.

inline float hmaxV(vf v) {
    v = maxV(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    v = maxV(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
    v = maxV(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
    return v[0] > v[1] ? v[0] : v[1];
}

template <class In>
void errorBlockScalar(const QuantArgs& a, const typename In::T* src, const std::uint8_t* codes, std::int64_t b,
                      std::int64_t e, float scale, float zp, ErrorSums& s, bool counts, bool sums, float worst,
                      std::int64_t firstIndex) {
    double bx = 0, bh = 0, bd = 0, be = 0, ba = 0;
    for (std::int64_t j = b; j < e; ++j) {
        const float x = loadOne<In>(src + j);
        const std::int32_t q = a.signedCodes ? static_cast<std::int8_t>(codes[j]) : codes[j];
        const float xhat = dequantizeValue(q, scale, zp, *a.plan);
        const bool ok = __builtin_isfinite(x) && __builtin_isfinite(xhat);
        if (counts) {
            s.nanX += __builtin_isnan(x);
            s.infX += __builtin_isinf(x);
            s.nonFiniteXhat += __builtin_isfinite(x) && !__builtin_isfinite(xhat);
            s.finite += ok;
        }
        if (!ok) continue;
        if (worst >= 0 && __builtin_fabsf(x - xhat) == worst) {
            s.maxAbsErr = worst;
            s.worstIndex = firstIndex + j;
            worst = -1; // the first one: ties keep the lowest index
        }
        if (sums) {
            const double xd = x, hd = xhat, d = xd - hd;
            bx += xd * xd;
            bh += hd * hd;
            bd += xd * hd;
            be += d * d;
            ba += __builtin_fabs(d);
        }
    }
    if (!sums) return;
    s.sumSqX += bx;
    s.sumSqXhat += bh;
    s.sumDot += bd;
    s.sumSqErr += be;
    s.sumAbsErr += ba;
}

// The first element of a block whose error equals `worst` (the lanes' own arithmetic, so equality
// is exact); vector compares, so a new worst element costs a fraction of the block's first pass.
template <class In, Op O>
std::int64_t findWorst(const QuantArgs& a, const typename In::T* src, const std::uint8_t* codes, std::int64_t b,
                       std::int64_t e, float scale, float zp, float worst) {
    const vf vs = splat(scale), vzp = splat(zp), target = splat(worst);
    for (std::int64_t j = b; j + W <= e; j += W) {
        const vf x = load<In>(src + j);
        vi8 cb;
        std::memcpy(&cb, codes + j, W);
        const vi q = a.signedCodes ? __builtin_convertvector(cb, vi) : __builtin_convertvector(cb, vi) & 0xFF;
        const vf value = __builtin_convertvector(q, vf) - vzp;
        vf xhat;
        if constexpr (O == Op::Div || O == Op::Recip) xhat = value * vs;
        else if constexpr (O == Op::Mul) xhat = value / vs;
        else xhat = value / vs / vs;
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
        vf sx{}, sh{}, sd{}, se{}, sa{}, maxAe{};
        vi o1{}, o5{}, bad{};
        for (; i + W <= blockEnd; i += W) {
            const vf x = load<In>(src + i);
            vi8 cb;
            std::memcpy(&cb, codes + i, W);
            const vi q = a.signedCodes ? __builtin_convertvector(cb, vi) : __builtin_convertvector(cb, vi) & 0xFF;
            const vf value = __builtin_convertvector(q, vf) - vzp;
            vf xhat;
            if constexpr (O == Op::Div || O == Op::Recip) xhat = value * vs;
            else if constexpr (O == Op::Mul) xhat = value / vs;
            else xhat = value / vs / vs;
            const vi ok = ((asU(x) & 0x7F800000u) != 0x7F800000u) & ((asU(xhat) & 0x7F800000u) != 0x7F800000u);
            bad |= ~ok;
            const vf xs = sel(ok, x, vf{}), hs = sel(ok, xhat, vf{});
            const vf d = xs - hs, ae = vabs(d), ax = vabs(xs);
            sx += xs * xs;
            sh += hs * hs;
            sd += xs * hs;
            se += d * d;
            sa += ae;
            maxAe = maxV(maxAe, ae);
            // Ascend ratio |e| > t|x|; at x = 0 this is "x̂ differs at all", as ErrorStats defines it.
            o1 -= ae > splat(1e-3f) * ax;
            o5 -= ae > splat(5e-3f) * ax;
        }
        double bx = 0, bh = 0, bd = 0, be = 0, ba = 0;
        bool anyBad = false;
        for (int k = 0; k < W; ++k) {
            bx += sx[k];
            bh += sh[k];
            bd += sd[k];
            be += se[k];
            ba += sa[k];
            s.over1e3 += o1[k];
            s.over5e3 += o5[k];
            anyBad = anyBad || bad[k];
        }
        s.count += i - blockStart;
        if (!anyBad) s.finite += i - blockStart;
        const float blockMax = hmaxV(maxAe);
        const bool newWorst = s.worstIndex < 0 || blockMax > s.maxAbsErr;
        const bool overflow = !__builtin_isfinite(bx + bh + be + ba) || !__builtin_isfinite(bd);
        if (anyBad || overflow)
            errorBlockScalar<In>(a, src, codes, blockStart, i, scale, zp, s, anyBad, overflow, -1.0f, firstIndex);
        if (newWorst) {
            const std::int64_t j = findWorst<In, O>(a, src, codes, blockStart, i, scale, zp, blockMax);
            if (j >= 0) {
                s.maxAbsErr = blockMax;
                s.worstIndex = firstIndex + j;
            }
        }
        if (!overflow) {
            s.sumSqX += bx;
            s.sumSqXhat += bh;
            s.sumDot += bd;
            s.sumSqErr += be;
            s.sumAbsErr += ba;
        }
    }
    for (; i < n; ++i) {
        const float x = loadOne<In>(src + i);
        const std::int32_t q = a.signedCodes ? static_cast<std::int8_t>(codes[i]) : codes[i];
        const float xhat = dequantizeValue(q, scale, zp, *a.plan);
        ++s.count;
        if (__builtin_isnan(x)) { ++s.nanX; continue; }
        if (__builtin_isinf(x)) { ++s.infX; continue; }
        if (!__builtin_isfinite(xhat)) { ++s.nonFiniteXhat; continue; }
        ++s.finite;
        const double xd = x, hd = xhat, e = xd - hd, ae = __builtin_fabs(e);
        s.sumSqX += xd * xd;
        s.sumSqXhat += hd * hd;
        s.sumDot += xd * hd;
        s.sumSqErr += e * e;
        s.sumAbsErr += ae;
        const float aef = __builtin_fabsf(x - xhat);
        if (aef > s.maxAbsErr || s.worstIndex < 0) {
            s.maxAbsErr = aef;
            s.worstIndex = firstIndex + i;
        }
        const double absX = __builtin_fabs(xd);
        s.over1e3 += ae > 1e-3 * absX;
        s.over5e3 += ae > 5e-3 * absX;
    }
}
