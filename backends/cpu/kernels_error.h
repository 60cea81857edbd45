// Fused error sums (included inside kernels_impl.h's ISA namespace). Per element this is
// ErrorStats::addElement: NaN / Inf inputs and non-finite reconstructions are counted apart; the
// products run in fp32 lanes, block sums are carried in double (see the block loop).

template <class In, Op O>
void errorConst(const QuantArgs& a, const void* srcv, const std::uint8_t* codes, std::int64_t n, float scale,
                float zp, ErrorSums* out) {
    const auto* src = static_cast<const typename In::T*>(srcv);
    ErrorSums& s = *out;
    const vf vs = splat(scale), vzp = splat(zp);
    const vf inf = splat(__builtin_inff());
    vf maxAe = splat(-1.0f);
    vi maxIdx{};
    vi lane{};
    for (int k = 0; k < W; ++k) lane[k] = k;
    std::int64_t i = 0;
    vi nanX{}, infX{}, badHat{};
    while (i + W <= n) {
        const std::int64_t blockStart = i;
        const std::int64_t blockEnd = n < i + 1024 ? n : i + 1024;
        // fp32 lanes over a block of at most 1024 elements (64 adds per lane), then double: within
        // 1e-5 of ErrorStats' all-double sums. A block whose squares overflow fp32 (|x| > 1e19) is
        // summed again in double below.
        vf sx{}, sh{}, sd{}, se{}, sa{};
        vi o1{}, o5{};
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
            const vf ax = vabs(x);
            const vi xnan = x != x, xinf = ax == inf;
            const vi hatBad = ~(vabs(xhat) < inf) & ~(xnan | xinf);
            const vi ok = ~(xnan | xinf | hatBad);
            nanX -= xnan;
            infX -= xinf;
            badHat -= hatBad;
            const vf xs = sel(ok, x, vf{}), hs = sel(ok, xhat, vf{});
            const vf e = xs - hs, ae = vabs(e);
            sx += xs * xs;
            sh += hs * hs;
            sd += xs * hs;
            se += e * e;
            sa += ae;
            const vi better = ok & (ae > maxAe);
            maxAe = sel(better, ae, maxAe);
            maxIdx = better ? lane + static_cast<std::int32_t>(i) : maxIdx;
            // Ascend ratio: |e| > t|x|; x = 0 counts when x̂ differs at all (excluded lanes are 0, 0).
            const vf axs = sel(ok, ax, vf{});
            const vi zeroX = axs == vf{};
            const vi zeroHit = zeroX & (ae != vf{});
            o1 -= zeroHit | (~zeroX & (ae > splat(1e-3f) * axs));
            o5 -= zeroHit | (~zeroX & (ae > splat(5e-3f) * axs));
        }
        double bx = 0, bh = 0, bd = 0, be = 0, ba = 0;
        for (int k = 0; k < W; ++k) {
            bx += sx[k];
            bh += sh[k];
            bd += sd[k];
            be += se[k];
            ba += sa[k];
            s.over1e3 += o1[k];
            s.over5e3 += o5[k];
        }
        if (!__builtin_isfinite(bx + bh + be + ba) || !__builtin_isfinite(bd)) {
            bx = bh = bd = be = ba = 0;
            for (std::int64_t j = blockStart; j < i; ++j) {
                const float x = loadOne<In>(src + j);
                const std::int32_t q = a.signedCodes ? static_cast<std::int8_t>(codes[j]) : codes[j];
                const float xhat = dequantizeValue(q, scale, zp, *a.plan);
                if (!__builtin_isfinite(x) || !__builtin_isfinite(xhat)) continue;
                const double xd = x, hd = xhat, e = xd - hd;
                bx += xd * xd;
                bh += hd * hd;
                bd += xd * hd;
                be += e * e;
                ba += __builtin_fabs(e);
            }
        }
        s.sumSqX += bx;
        s.sumSqXhat += bh;
        s.sumDot += bd;
        s.sumSqErr += be;
        s.sumAbsErr += ba;
    }
    std::int64_t excluded = 0;
    for (int k = 0; k < W; ++k) {
        s.nanX += nanX[k];
        s.infX += infX[k];
        s.nonFiniteXhat += badHat[k];
        excluded += nanX[k] + infX[k] + badHat[k];
        if (maxAe[k] < 0) continue;
        if (maxAe[k] > s.maxAbsErr || s.worstIndex < 0 || (maxAe[k] == s.maxAbsErr && maxIdx[k] < s.worstIndex)) {
            s.maxAbsErr = maxAe[k];
            s.worstIndex = maxIdx[k];
        }
    }
    const std::int64_t vectorPart = i;
    s.count += vectorPart;
    s.finite += vectorPart - excluded;
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
        if (static_cast<float>(ae) > s.maxAbsErr || s.worstIndex < 0) {
            s.maxAbsErr = static_cast<float>(ae);
            s.worstIndex = i;
        }
        const double absX = __builtin_fabs(xd);
        s.over1e3 += absX == 0.0 ? ae != 0.0 : ae > 1e-3 * absX;
        s.over5e3 += absX == 0.0 ? ae != 0.0 : ae > 5e-3 * absX;
    }
}
