#pragma once
// How the fast calibrators read a tensor: its bytes in place (f32, bf16, f16), a tile at a time,
// split over worker threads by rows (when rows own their scale groups) or by element slices (each
// worker with its own counts, summed afterwards). Only integer counts and min / max are merged, so
// the split never shows in a result.
#include "base/workers.h"
#include "quant/calibration_search.h"
#include "quant/resolved_spec.h"
#include "quant/row_walker.h"
#include "tensor/dtype.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ql::calib {

constexpr std::int64_t kTile = 512;

/// IEEE half bits to f32, exactly (subnormals included), without a table or a call.
inline float halfBitsToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t em = h & 0x7FFFu;
    const float f = em >= 0x7C00u ? std::bit_cast<float>(0x7F800000u | ((em & 0x3FFu) << 13))
                                  : std::bit_cast<float>(em << 13) * 0x1p112f;
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | sign);
}

/// The input: row-major elements of one of the three float dtypes, at any alignment.
struct Input {
    const std::byte* data = nullptr;
    DType dtype = DType::F32;

    float at(std::int64_t i) const {
        float buf;
        return *read(i, 1, &buf);
    }
    /// Elements [begin, begin + n), n <= kTile, as f32: in place when possible, else widened into buf.
    const float* read(std::int64_t begin, std::int64_t n, float* buf) const {
        const auto count = static_cast<std::size_t>(n);
        if (dtype == DType::F32) {
            const std::byte* p = data + static_cast<std::size_t>(begin) * 4;
            if (reinterpret_cast<std::uintptr_t>(p) % alignof(float) == 0)
                return reinterpret_cast<const float*>(p);
            std::memcpy(buf, p, count * 4);
            return buf;
        }
        std::uint16_t h[kTile];
        std::memcpy(h, data + static_cast<std::size_t>(begin) * 2, count * 2);
        if (dtype == DType::BF16) {
            std::size_t i = 0;
#if defined(__SSE2__)
            for (; i + 8 <= count; i += 8) { // bf16 is the top half of an f32: interleave with zeros
                const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + i),
                                 _mm_unpacklo_epi16(_mm_setzero_si128(), v));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + i + 4),
                                 _mm_unpackhi_epi16(_mm_setzero_si128(), v));
            }
#endif
            for (; i < count; ++i)
                buf[i] = std::bit_cast<float>(static_cast<std::uint32_t>(h[i]) << 16);
        } else
            for (std::size_t i = 0; i < count; ++i)
                buf[i] = halfBitsToFloat(h[i]);
        return buf;
    }
};

/// One worker's reader of contiguous runs, a tile at a time or a run at once.
class Tile {
public:
    explicit Tile(const Input& in)
        : m_in(in) {}
    /// fn(const float* values, n) over [begin, begin + length) in order.
    template <typename Fn> void forEach(std::int64_t begin, std::int64_t length, Fn&& fn) {
        for (std::int64_t b = begin, end = begin + length; b < end; b += kTile) {
            const std::int64_t n = std::min(kTile, end - b);
            fn(m_in.read(b, n, m_buf), n);
        }
    }
    /// [begin, begin + length) as f32 at once, for a run read more than once: in place when the
    /// input is aligned f32, else widened once into a buffer (valid until the next call).
    const float* whole(std::int64_t begin, std::int64_t length) {
        if (length <= 0) return m_buf;
        if (const float* p = m_in.read(begin, 1, m_buf); p != m_buf) return p; // (in place)
        m_run.resize(static_cast<std::size_t>(length));
        for (std::int64_t b = 0; b < length; b += kTile) {
            const std::int64_t n = std::min(kTile, length - b);
            float* const to = m_run.data() + b;
            if (const float* p = m_in.read(begin + b, n, to); p != to)
                std::memcpy(to, p, static_cast<std::size_t>(n) * sizeof(float));
        }
        return m_run.data();
    }

private:
    Input m_in;
    float m_buf[kTile];
    std::vector<float> m_run;
};

/// Finite min / max, NaN flag and finite count of a run (vectorised; the oracle's GroupRange::add).
void rangeOfRun(const float* v, std::int64_t n, GroupRange& g);
/// max |x| over a run's finite values (GroupRange::absMax), negated (sign bit set, -0 included) when
/// the run holds a NaN.
float absMaxOfRun(const float* v, std::int64_t n);
/// absMaxOfRun of each consecutive block of n values (the last may be short) into out[0, 1, ...];
/// four blocks at a time when the block is a multiple of four.
void absMaxOfBlocks(const float* v, std::int64_t n, std::int64_t block, float* out);

/// Histograms are counted into kCopies interleaved copies (value i into copy i % kCopies), so that
/// neighbouring values falling in one bin do not wait on each other's increments.
constexpr std::size_t kCopies = 4;
/// Sums the copies (each `stride` apart) of the first `bins` bins into hist.
inline void sumCopies(const std::uint32_t* copies, std::size_t bins, std::size_t stride,
                      std::vector<std::uint32_t>& hist) {
    hist.assign(bins, 0u);
    for (std::size_t c = 0; c < kCopies; ++c)
        for (std::size_t b = 0; b < bins; ++b)
            hist[b] += copies[c * stride + b];
}
#if defined(__SSE2__)
/// Lanes of `yes` where mask is all ones, of `no` elsewhere.
inline __m128i selectLanes(__m128i mask, __m128i yes, __m128i no) {
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}
/// Adds one to slot lanes[k] of copy k (copies `stride` apart) for each of the four lanes.
inline void countLanes(std::uint32_t* copies, std::size_t stride, __m128i lanes) {
    alignas(16) std::int32_t idx[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(idx), lanes);
    for (std::size_t k = 0; k < 4; ++k)
        ++copies[k * stride + static_cast<std::size_t>(idx[k])];
}
#endif

/// Counts a run into kCopies copies of g's histogram, each bins + 1 long: bin g.binOf(v) (of |v| when
/// `absolute`), non-finite values into the extra last slot. Four lanes at a time, as binOf computes;
/// `allFinite` (a run whose range counted every value finite) spares each lane its test.
void countBins(const float* v, std::int64_t n, const HistogramGeometry& g, bool absolute,
               std::uint32_t* copies, bool allFinite);

/// The percentile selection of one run of `length` values from `begin`: the k-th value (the oracle's
/// percentileRange) and how many values lie past it, found from the run's tails when the percentile
/// is near an end and `fromTails` (else by radix, as for any percentile). Sets the finite count.
GroupClip percentileOfRun(Tile& tile, std::int64_t begin, std::int64_t length, double percentile,
                          bool symmetric, bool fromTails, std::int64_t& finite);

class Scan {
public:
    Scan(const ResolvedSpec& plan, Input in, unsigned threads);

    /// True when each scale group is one contiguous run of one row (per-channel on axis 0, per-group
    /// and blocks along the last axis): such groups can be finished one at a time, in cache.
    bool groupsAreRuns() const { return m_runs; }
    /// Every group's GroupRange, in one pass.
    std::vector<GroupRange> ranges() const;
    /// Every group's max |x| over finite values (GroupRange::absMax), with the sign bit set when the
    /// group holds a NaN, into out[group]: what block formats need, without the rest of a GroupRange.
    void absMaxOrNan(float* out) const;
    /// True when one axis has a scale per index and every other axis shares it, and the groups are
    /// not runs: each group is then `outer` spans of `inner` values, `groups × inner` apart (per-channel
    /// on the last axis, a Keras or ONNX kernel stored [in, out]: spans of one value; on the middle
    /// axis of an RNN's [directions, gates × hidden, input]: spans of a row).
    bool groupsAreStrided() const { return m_strided; }
    /// fn(group, values, count) for every group (groupsAreStrided()), its values gathered into one
    /// run (valid during the call; in span order, which no calibration depends on). Groups of short
    /// spans come a strip at a time, eight values of each outer index (eight columns: the strip's
    /// runs stay in the core's cache, 128 KiB for 4096 rows, and the next strip finds the other half
    /// of each row's cache line there too; 4096x4096 f32, MSE: 16 columns 34 ms, 8 25 ms, 4 42 ms).
    /// The buffer never holds more values than the tensor. Strips split over workers.
    template <typename Fn> void forStridedGroups(Fn&& fn) const {
        constexpr std::int64_t kStripValues = 8;
        const std::int64_t groups = m_plan.scaleCount, inner = m_stridedInner, outer = m_n / (groups * inner);
        const std::int64_t per = std::min(groups, std::max<std::int64_t>(1, kStripValues / inner)),
                           strips = (groups + per - 1) / per, count = outer * inner;
        const auto t = static_cast<unsigned>(std::clamp<std::int64_t>(strips, 1, m_threads));
        run(t, [&](unsigned w) {
            std::vector<float> runs(static_cast<std::size_t>(per * count));
            float tile[kTile];
            for (std::int64_t s = strips * w / t; s < strips * (w + 1) / t; ++s) {
                const std::int64_t first = s * per, width = std::min(per, groups - first),
                                   span = width * inner;
                for (std::int64_t o = 0; o < outer; ++o)
                    for (std::int64_t p = 0; p < span; p += kTile) { // the strip's values of outer index o
                        const std::int64_t n = std::min(kTile, span - p);
                        const float* const v = m_in.read((o * groups + first) * inner + p, n, tile);
                        float* const to = runs.data() + o * inner;
                        if (inner == 1) { // columns: value q is group q's
                            for (std::int64_t q = 0; q < n; ++q)
                                to[(p + q) * count] = v[q];
                            continue;
                        }
                        std::int64_t j = p / inner, at = p % inner; // value p's group in the strip, and place
                        for (std::int64_t q = 0; q < n; ++q) {
                            to[j * count + at] = v[q];
                            if (++at == inner) at = 0, ++j;
                        }
                    }
                for (std::int64_t j = 0; j < width; ++j)
                    fn(first + j, runs.data() + j * count, count);
            }
        });
    }
    /// True when groups are blocks along the last axis that forBlockTiles can walk.
    bool blocksAlongRows() const {
        const DimMapping& last = m_plan.layout.dims.back();
        return m_runs && last.kind == DimMapping::Kind::Block && last.block <= kTile;
    }
    /// fn(firstGroup, values, n) for every tile of whole blocks along the last axis
    /// (blocksAlongRows()): the tile's blocks are groups firstGroup, firstGroup + 1, ...; only a
    /// row's last block may be short. Rows split over workers.
    template <typename Fn> void forBlockTiles(Fn&& fn) const {
        const std::int64_t block = m_plan.layout.dims.back().block;
        forWorkers([&](unsigned, std::int64_t b, std::int64_t e) { blocksOfRows(b, e, block, fn); });
    }
    std::int64_t blockLength() const { return m_plan.layout.dims.back().block; }

    /// fn(group, begin, length, Tile&) for every run; only when groupsAreRuns(). Rows split over workers.
    template <typename Fn> void forRuns(Fn&& fn) const {
        forWorkers([&](unsigned, std::int64_t b, std::int64_t e) {
            Tile tile(m_in);
            m_walk.forSegments(b, e, [&](const Segment& s) { fn(s.scale, s.begin, s.length, tile); });
        });
    }

    /// Integer counts over the tensor: fn(counts, group, values, n, perElement) for each tile of a
    /// segment (perElement: value i belongs to group + i). Workers own disjoint groups when rows own
    /// them; otherwise each counts into its own array and the arrays are summed.
    template <typename Fn> std::vector<std::uint32_t> count(std::size_t size, Fn&& fn) const {
        const bool shared = m_ownRows;
        std::vector<std::vector<std::uint32_t>> own(shared ? 0 : m_threads);
        std::vector<std::uint32_t> total(size, 0);
        forWorkers([&](unsigned w, std::int64_t b, std::int64_t e) {
            std::uint32_t* h = total.data();
            if (!shared) {
                own[w].assign(size, 0);
                h = own[w].data();
            }
            segments(b, e, [&](std::int64_t group, const float* v, std::int64_t n, bool perElement) {
                fn(h, group, v, n, perElement);
            });
        });
        for (const auto& o : own)
            for (std::size_t i = 0; i < o.size(); ++i)
                total[i] += o[i];
        return total;
    }

    /// Values gathered into `lists` lists: fn(workerLists, group, values, n, perElement) appends to
    /// workerLists[list]. Each list holds what every worker gathered, in worker order (users must not
    /// depend on the order).
    template <typename T, typename Fn> std::vector<std::vector<T>> collect(std::size_t lists, Fn&& fn) const {
        std::vector<std::vector<std::vector<T>>> own(m_threads);
        forWorkers([&](unsigned w, std::int64_t b, std::int64_t e) {
            auto& mine = own[w];
            mine.resize(lists);
            segments(b, e, [&](std::int64_t group, const float* v, std::int64_t n, bool perElement) {
                fn(mine, group, v, n, perElement);
            });
        });
        std::vector<std::vector<T>> out(lists);
        for (const auto& o : own)
            for (std::size_t s = 0; s < o.size(); ++s)
                out[s].insert(out[s].end(), o[s].begin(), o[s].end());
        return out;
    }

    /// fn(begin, end) over [0, count) split into one slice per worker.
    template <typename Fn> void forSlices(std::int64_t count, Fn&& fn) const {
        const unsigned t = static_cast<unsigned>(std::clamp<std::int64_t>(count, 1, m_threads));
        run(t, [&](unsigned w) { fn(count * w / t, count * (w + 1) / t); });
    }

    /// fn(group, finite values in row-major order) for every group, groups split over workers.
    /// Runs are widened a run at a time; other layouts are gathered group by group first.
    void forGroupValues(const std::function<void(std::int64_t, std::span<const float>)>& fn) const;

private:
    template <typename Fn> void run(unsigned workers, Fn&& fn) const { runOnWorkers(workers, fn); }
    /// fn(worker, elementBegin, elementEnd): whole rows per worker when rows own their groups.
    template <typename Fn> void forWorkers(Fn&& fn) const {
        const std::int64_t units = m_ownRows ? m_walk.rows() : m_n, width = m_ownRows ? m_walk.inner() : 1;
        const unsigned t = static_cast<unsigned>(std::clamp<std::int64_t>(units, 1, m_threads));
        run(t, [&](unsigned w) { fn(w, units * w / t * width, units * (w + 1) / t * width); });
    }
    /// fn(firstGroup, values, n) for each tile of whole blocks of the last axis in the rows of
    /// [begin, end) (groupsAreRuns() with Block(block) last, block <= kTile).
    template <typename Fn>
    void blocksOfRows(std::int64_t begin, std::int64_t end, std::int64_t block, Fn&& fn) const {
        const std::int64_t inner = m_walk.inner(), span = kTile / block * block;
        float buf[kTile];
        for (std::int64_t row = begin / inner; row < end / inner; ++row) {
            const std::int64_t first = m_walk.rowFirstScale(row);
            for (std::int64_t c = 0; c < inner; c += span) {
                const std::int64_t n = std::min(span, inner - c);
                fn(first + c / block, m_in.read(row * inner + c, n, buf), n);
            }
        }
    }
    /// fn(group, values, n, perElement) tile by tile over the segments of [begin, end).
    template <typename Fn> void segments(std::int64_t begin, std::int64_t end, Fn&& fn) const {
        Tile tile(m_in);
        m_walk.forSegments(begin, end, [&](const Segment& s) {
            std::int64_t at = s.begin;
            tile.forEach(s.begin, s.length, [&](const float* v, std::int64_t n) {
                fn(s.perElement ? s.scale + (at - s.begin) : s.scale, v, n, s.perElement);
                at += n;
            });
        });
    }

    const ResolvedSpec& m_plan;
    Input m_in;
    unsigned m_threads;
    RowWalker m_walk;
    std::int64_t m_n;
    bool m_ownRows;
    bool m_runs;
    bool m_strided;
    std::int64_t m_stridedInner = 1; // values a span of a strided group holds
};

} // namespace ql::calib
