// Fused error sums (included inside kernels_impl.h's ISA namespace). Per element this is
// ErrorStats::addElement: NaN / Inf inputs and non-finite reconstructions are counted apart; the
// products and sums run in double lanes, as ErrorStats does them.

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
        const std::int64_t blockEnd = n < i + 1024 ? n : i + 1024;
        vd sx{}, sh{}, sd{}, se{}, sa{};
        vdl o1{}, o5{};
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
            // In double, as ErrorStats (x² of a large weight must not overflow fp32), in two halves
            // of native width.
            const vd xd[2] = {__builtin_convertvector(lowHalf(xs), vd), __builtin_convertvector(highHalf(xs), vd)};
            const vd hd[2] = {__builtin_convertvector(lowHalf(hs), vd), __builtin_convertvector(highHalf(hs), vd)};
            vd aeh[2];
            for (int h = 0; h < 2; ++h) {
                const vd e = xd[h] - hd[h];
                const vd ae = dabs(e), axd = dabs(xd[h]);
                aeh[h] = ae;
                sx += xd[h] * xd[h];
                sh += hd[h] * hd[h];
                sd += xd[h] * hd[h];
                se += e * e;
                sa += ae;
                // Ascend ratio: |e| > t|x|; x = 0 counts when x̂ differs at all (excluded lanes are 0, 0).
                const vdl zeroX = axd == vd{};
                o1 -= (zeroX & (ae != vd{})) | (~zeroX & (ae > 1e-3 * axd));
                o5 -= (zeroX & (ae != vd{})) | (~zeroX & (ae > 5e-3 * axd));
            }
            const vf aef = joinHalves(__builtin_convertvector(aeh[0], vf8), __builtin_convertvector(aeh[1], vf8));
            const vi better = ok & (aef > maxAe);
            maxAe = sel(better, aef, maxAe);
            maxIdx = better ? lane + static_cast<std::int32_t>(i) : maxIdx;
        }
        for (int k = 0; k < W / 2; ++k) {
            s.sumSqX += sx[k];
            s.sumSqXhat += sh[k];
            s.sumDot += sd[k];
            s.sumSqErr += se[k];
            s.sumAbsErr += sa[k];
            s.over1e3 += o1[k];
            s.over5e3 += o5[k];
        }
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
