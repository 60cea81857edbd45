#include "quant/calibration_scan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace ql::calib {

void rangeOfRun(const float* v, std::int64_t n, GroupRange& g) {
    std::int64_t i = 0;
#if defined(__SSE2__)
    // Eight values a step in two sets of lanes, so the min / max chains overlap. Non-finite lanes
    // become 0, which never moves a range that starts at 0, and are counted; only a run that holds
    // some is searched for NaN. min_ps(y, lo) is (y < lo ? y : lo), std::min's choice, so -0 never
    // replaces +0 here either.
    const __m128i expMask = _mm_set1_epi32(0x7F800000);
    __m128 lo[2] = {_mm_setzero_ps(), _mm_setzero_ps()}, hi[2] = {_mm_setzero_ps(), _mm_setzero_ps()};
    __m128i odd = _mm_setzero_si128(); // non-finite lanes, counted down
    for (; i + 8 <= n; i += 8)
        for (int h = 0; h < 2; ++h) {
            const __m128i u = _mm_castps_si128(_mm_loadu_ps(v + i + 4 * h));
            const __m128i inf = _mm_cmpeq_epi32(_mm_and_si128(u, expMask), expMask);
            odd = _mm_add_epi32(odd, inf);
            const __m128 y = _mm_castsi128_ps(_mm_andnot_si128(inf, u));
            lo[h] = _mm_min_ps(y, lo[h]);
            hi[h] = _mm_max_ps(y, hi[h]);
        }
    alignas(16) float l[4], h[4];
    alignas(16) std::int32_t q[4];
    _mm_store_ps(l, _mm_min_ps(lo[1], lo[0]));
    _mm_store_ps(h, _mm_max_ps(hi[1], hi[0]));
    _mm_store_si128(reinterpret_cast<__m128i*>(q), odd);
    const std::int64_t nonFinite = -(std::int64_t{q[0]} + q[1] + q[2] + q[3]);
    for (int k = 0; k < 4; ++k) {
        g.lo = std::min(g.lo, l[k]);
        g.hi = std::max(g.hi, h[k]);
    }
    g.finite += i - nonFinite;
    for (std::int64_t j = 0; j < i && nonFinite > 0 && !g.nan; ++j)
        g.nan = std::isnan(v[j]);
#endif
    for (; i < n; ++i)
        g.add(v[i]);
}

float absMaxOfRun(const float* v, std::int64_t n) {
    std::int64_t i = 0;
    float m = 0.0f;
    bool nan = false;
#if defined(__SSE2__)
    const __m128i absMask = _mm_set1_epi32(0x7FFFFFFF), inf = _mm_set1_epi32(0x7F800000);
    __m128 mx = _mm_setzero_ps();
    __m128i nanLanes = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
        const __m128i a = _mm_and_si128(_mm_castps_si128(_mm_loadu_ps(v + i)), absMask);
        const __m128i finite = _mm_cmplt_epi32(a, inf);
        nanLanes = _mm_or_si128(nanLanes, _mm_cmpgt_epi32(a, inf));
        mx = _mm_max_ps(mx, _mm_castsi128_ps(_mm_and_si128(a, finite)));
    }
    mx = _mm_max_ps(mx, _mm_shuffle_ps(mx, mx, _MM_SHUFFLE(1, 0, 3, 2)));
    mx = _mm_max_ps(mx, _mm_shuffle_ps(mx, mx, _MM_SHUFFLE(2, 3, 0, 1)));
    m = _mm_cvtss_f32(mx);
    nan = _mm_movemask_epi8(nanLanes) != 0;
#endif
    for (; i < n; ++i) {
        nan = nan || std::isnan(v[i]);
        if (std::isfinite(v[i])) m = std::max(m, std::fabs(v[i]));
    }
    return nan ? -m : m;
}

void countBins(const float* v, std::int64_t n, const HistogramGeometry& g, bool absolute,
               std::uint32_t* copies, bool allFinite) {
    const auto bins = static_cast<std::size_t>(g.bins), stride = bins + 1;
    std::int64_t i = 0;
#if defined(__SSE2__)
    static_assert(kCopies == 4, "one copy per lane");
    const __m128 origin = _mm_set1_ps(g.origin), factor = _mm_set1_ps(g.factor),
                 top = _mm_set1_ps(static_cast<float>(g.bins));
    const __m128i expMask = _mm_set1_epi32(0x7F800000), absMask = _mm_set1_epi32(0x7FFFFFFF);
    const __m128i last = _mm_set1_epi32(g.bins - 1), trash = _mm_set1_epi32(g.bins);
    if (allFinite) {
        // binOf's t < bins ? int(t) : bins - 1 as one min: t clamped to the float below bins
        // truncates to bins - 1, and any t below it is unchanged.
        const __m128 below = _mm_set1_ps(std::nextafter(static_cast<float>(g.bins), 0.0f));
        for (; i + 4 <= n; i += 4) {
            const __m128i u = _mm_castps_si128(_mm_loadu_ps(v + i));
            const __m128 x = _mm_castsi128_ps(absolute ? _mm_and_si128(u, absMask) : u);
            countLanes(copies, stride,
                       _mm_cvttps_epi32(_mm_min_ps(_mm_mul_ps(_mm_sub_ps(x, origin), factor), below)));
        }
    }
    for (; i + 4 <= n; i += 4) {
        const __m128i u = _mm_castps_si128(_mm_loadu_ps(v + i));
        const __m128 x = _mm_castsi128_ps(absolute ? _mm_and_si128(u, absMask) : u);
        const __m128i nonFinite = _mm_cmpeq_epi32(_mm_and_si128(u, expMask), expMask);
        const __m128 t = _mm_mul_ps(_mm_sub_ps(x, origin), factor);
        const __m128i below = _mm_castps_si128(_mm_cmplt_ps(t, top)); // binOf's t < bins
        countLanes(copies, stride,
                   selectLanes(nonFinite, trash, selectLanes(below, _mm_cvttps_epi32(t), last)));
    }
#else
    (void)allFinite;
#endif
    for (; i < n; ++i) {
        const std::size_t b =
            std::isfinite(v[i]) ? static_cast<std::size_t>(g.binOf(absolute ? std::fabs(v[i]) : v[i])) : bins;
        ++copies[(static_cast<std::size_t>(i) % kCopies) * stride + b];
    }
}

void absMaxOfBlocks(const float* v, std::int64_t n, std::int64_t block, float* out) {
    std::int64_t j = 0;
#if defined(__SSE2__)
    if (block % 4 == 0) {
        // Four blocks' lane maxima, transposed so that one max gives the four block maxima. All are
        // >= 0 and none is NaN, so the order of the max operations does not matter.
        const __m128i absMask = _mm_set1_epi32(0x7FFFFFFF), inf = _mm_set1_epi32(0x7F800000);
        for (; (j + 4) * block <= n; j += 4) {
            __m128 m[4];
            int nan[4];
            for (int q = 0; q < 4; ++q) {
                const float* b = v + (j + q) * block;
                __m128 mx = _mm_setzero_ps();
                __m128i nn = _mm_setzero_si128();
                for (std::int64_t k = 0; k < block; k += 4) {
                    const __m128i a = _mm_and_si128(_mm_castps_si128(_mm_loadu_ps(b + k)), absMask);
                    nn = _mm_or_si128(nn, _mm_cmpgt_epi32(a, inf));
                    mx = _mm_max_ps(mx, _mm_castsi128_ps(_mm_and_si128(a, _mm_cmplt_epi32(a, inf))));
                }
                m[q] = mx;
                nan[q] = _mm_movemask_epi8(nn);
            }
            _MM_TRANSPOSE4_PS(m[0], m[1], m[2], m[3]);
            alignas(16) float r[4];
            _mm_store_ps(r, _mm_max_ps(_mm_max_ps(m[0], m[1]), _mm_max_ps(m[2], m[3])));
            for (int q = 0; q < 4; ++q)
                out[j + q] = nan[q] ? -r[q] : r[q];
        }
    }
#endif
    for (; j * block < n; ++j)
        out[j] = absMaxOfRun(v + j * block, std::min(block, n - j * block));
}

Scan::Scan(const ResolvedSpec& plan, Input in, unsigned threads)
    : m_plan(plan)
    , m_in(in)
    , m_threads(std::max(1u, threads))
    , m_walk(plan)
    , m_n(elementCount(plan.shape)) {
    m_ownRows = m_walk.rowsOwnGroups();
    m_runs = m_ownRows && plan.layout.dims.back().kind != DimMapping::Kind::Full;
    // One axis with a scale per index, every other shared: the values after that axis are a span.
    const auto& dims = plan.layout.dims;
    const auto full = [](const DimMapping& d) { return d.kind == DimMapping::Kind::Full; };
    const auto shared = [](const DimMapping& d) { return d.kind == DimMapping::Kind::Shared; };
    const auto axis = std::find_if(dims.begin(), dims.end(), full);
    // (Groups of one value each, as in a [1, n] tensor, are the streaming path's per-element case.)
    m_strided =
        !m_runs && m_n > plan.scaleCount && axis != dims.end() &&
        std::count_if(dims.begin(), dims.end(), shared) + 1 == static_cast<std::ptrdiff_t>(dims.size());
    for (std::size_t d = static_cast<std::size_t>(axis - dims.begin()) + 1; m_strided && d < dims.size(); ++d)
        m_stridedInner *= plan.shape[d];
}

std::vector<GroupRange> Scan::ranges() const {
    const auto groups = static_cast<std::size_t>(m_plan.scaleCount);
    std::vector<GroupRange> total(groups);
    std::vector<std::vector<GroupRange>> own(m_ownRows ? 0 : m_threads);
    const DimMapping& last = m_plan.layout.dims.back();
    const std::int64_t block = last.kind == DimMapping::Kind::Block ? last.block : 0;
    forWorkers([&](unsigned w, std::int64_t b, std::int64_t e) {
        GroupRange* r = total.data();
        if (!m_ownRows) {
            own[w].assign(groups, GroupRange{});
            r = own[w].data();
        }
        if (m_runs && block > 0 && block <= kTile) { // blocks along the last axis (MX, NVFP4, per-group)
            blocksOfRows(b, e, block, [&](std::int64_t first, const float* v, std::int64_t n) {
                for (std::int64_t j = 0; j < n; j += block)
                    rangeOfRun(v + j, std::min(block, n - j), r[first + j / block]);
            });
            return;
        }
        segments(b, e, [&](std::int64_t group, const float* v, std::int64_t n, bool perElement) {
            if (!perElement) {
                rangeOfRun(v, n, r[group]);
                return;
            }
            for (std::int64_t i = 0; i < n; ++i)
                r[group + i].add(v[i]);
        });
    });
    for (const auto& o : own) // a tensor of fewer elements than threads leaves some workers unstarted
        for (std::size_t g = 0; g < o.size(); ++g)
            total[g].merge(o[g]);
    return total;
}

void Scan::absMaxOrNan(float* out) const {
    const DimMapping& last = m_plan.layout.dims.back();
    const std::int64_t block = last.kind == DimMapping::Kind::Block ? last.block : 0;
    if (!m_runs || block == 0 || block > kTile) {
        const auto r = ranges();
        for (std::size_t g = 0; g < r.size(); ++g)
            out[g] = r[g].nan ? -r[g].absMax() : r[g].absMax();
        return;
    }
    forBlockTiles([&](std::int64_t first, const float* v, std::int64_t n) {
        absMaxOfBlocks(v, n, block, out + first);
    });
}

void Scan::forGroupValues(const std::function<void(std::int64_t, std::span<const float>)>& fn) const {
    if (m_runs) {
        forRuns([&](std::int64_t group, std::int64_t begin, std::int64_t length, Tile& tile) {
            thread_local std::vector<float> finite;
            finite.clear();
            tile.forEach(begin, length, [&](const float* v, std::int64_t n) {
                for (std::int64_t i = 0; i < n; ++i)
                    if (std::isfinite(v[i])) finite.push_back(v[i]);
            });
            fn(group, finite);
        });
        return;
    }
    // Groups spread over rows: gather each group's finite values, in order (a counting sort).
    const auto groups = static_cast<std::size_t>(m_plan.scaleCount);
    std::vector<std::size_t> offset(groups + 1, 0);
    segments(0, m_n, [&](std::int64_t group, const float* v, std::int64_t n, bool perElement) {
        for (std::int64_t i = 0; i < n; ++i)
            if (std::isfinite(v[i])) ++offset[static_cast<std::size_t>(perElement ? group + i : group) + 1];
    });
    for (std::size_t g = 0; g < groups; ++g)
        offset[g + 1] += offset[g];
    std::vector<float> values(offset[groups]);
    std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
    segments(0, m_n, [&](std::int64_t group, const float* v, std::int64_t n, bool perElement) {
        for (std::int64_t i = 0; i < n; ++i)
            if (std::isfinite(v[i]))
                values[fill[static_cast<std::size_t>(perElement ? group + i : group)]++] = v[i];
    });
    forSlices(static_cast<std::int64_t>(groups), [&](std::int64_t g0, std::int64_t g1) {
        for (auto g = static_cast<std::size_t>(g0); g < static_cast<std::size_t>(g1); ++g)
            fn(static_cast<std::int64_t>(g), {values.data() + offset[g], offset[g + 1] - offset[g]});
    });
}

} // namespace ql::calib
