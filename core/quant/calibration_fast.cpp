// The fast calibrators: the oracle's answers (calibration.cpp) from the tensor in place, with
// threads. Every pass accumulates only integer counts and min / max per group, and every search
// after it is the shared per-group code in calibration_search.cpp, so the result is the oracle's
// bit for bit and does not depend on how the work was split.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/error.h"
#include "quant/calibration.h"
#include "quant/calibration_scan.h"
#include "quant/calibration_search.h"
#include "quant/range_rule.h"
#include "quant/row_walker.h"

namespace ql {
namespace {

using calib::Input;
using calib::Scan;

using calib::kCopies;
using calib::sumCopies;

// ---- percentile: radix selection on order-preserving keys ------------------------------------
//
// One histogram of each key's top bits finds the bucket that holds the k-th key; the keys of that
// bucket (usually a handful) are then gathered and the k-th picked among them. A bucket too full to
// gather (constant data) is narrowed by more digit passes instead. Counts are merged as integers.

struct Selection {
    double percentile = 0.0;
    std::uint32_t prefix = 0; // the top `bits` bits of the k-th key
    int bits = 0;
    std::int64_t rank = 0;  // within the keys that share the prefix
    std::int64_t below = 0; // keys below / above the prefix (for the clipped count)
    std::int64_t above = 0;
    std::int64_t finite = -1; // unknown until the first pass
    std::int64_t inBucket = 0;

    bool done() const { return finite == 0 || bits == 32; }
    bool shares(std::uint32_t key) const { return bits == 0 || (key >> (32 - bits)) == prefix; }
};

// Picks the bucket of the next `width` key bits that holds the rank, from their histogram.
void narrow(Selection& s, const std::uint32_t* hist, int width) {
    const std::int64_t buckets = std::int64_t{1} << width;
    std::int64_t total = 0;
    for (std::int64_t d = 0; d < buckets; ++d)
        total += hist[d];
    if (s.finite < 0) {
        s.finite = total;
        s.rank = total > 0 ? percentileRank(total, s.percentile) : 0;
    }
    if (s.done()) return;
    std::int64_t cum = 0;
    for (std::int64_t d = 0; d < buckets; ++d) {
        if (cum + hist[d] > s.rank) {
            s.below += cum;
            s.above += total - cum - hist[d];
            s.rank -= cum;
            s.prefix = static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.prefix) << width) |
                                                  static_cast<std::uint64_t>(d));
            s.bits += width;
            s.inBucket = hist[d];
            return;
        }
        cum += hist[d];
    }
}

// The k-th key among the keys of its bucket (any order).
void finish(Selection& s, std::vector<std::uint32_t>& keys) {
    if (s.done()) return;
    std::nth_element(keys.begin(), keys.begin() + s.rank, keys.end());
    const std::uint32_t kth = keys[static_cast<std::size_t>(s.rank)];
    for (std::uint32_t k : keys) {
        s.below += k < kth;
        s.above += k > kth;
    }
    s.prefix = kth;
    s.bits = 32;
}

struct Digit {
    int shift;
    int width;
    std::uint32_t of(std::uint32_t key) const { return (key >> shift) & ((1u << width) - 1u); }
};
// The next digit of a selection: at most `bits` wide.
Digit nextDigit(const Selection& s, int bits) {
    const int width = std::min(bits, 32 - s.bits);
    return {32 - s.bits - width, width};
}

GroupClip selectionResult(const Selection* s, bool symmetric) {
    GroupClip c;
    if (s[0].finite <= 0) return c;
    if (symmetric) {
        const double a = fromMagnitudeKey(s[0].prefix);
        c.range = {-a, a};
        c.clipped = s[0].above;
        return c;
    }
    c.range = {fromOrderedKey(s[0].prefix), fromOrderedKey(s[1].prefix)};
    c.clipped = std::min(s[0].finite, s[0].below + s[1].above);
    return c;
}

template <bool Symmetric> inline bool keyOf(float v, std::uint32_t& key) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    if ((u & 0x7F800000u) == 0x7F800000u) return false;
    if (!Symmetric && (u & 0x7FFFFFFFu) == 0) u = 0; // -0 == +0, as the oracle's comparisons see it
    key = Symmetric ? (u << 1) : ((u & 0x80000000u) ? ~u : (u | 0x80000000u));
    return true;
}

constexpr int kDigitBits = 11;

#if defined(__SSE2__)
// keyOf for four lanes: the keys, and an all-ones lane where the value is finite.
template <bool Symmetric> inline __m128i keysOf(const float* v, __m128i& finite) {
    __m128i u = _mm_castps_si128(_mm_loadu_ps(v));
    const __m128i expMask = _mm_set1_epi32(0x7F800000);
    finite = _mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(u, expMask), expMask), _mm_set1_epi32(-1));
    if (Symmetric) return _mm_slli_epi32(u, 1);
    u = _mm_andnot_si128(_mm_cmpeq_epi32(_mm_and_si128(u, _mm_set1_epi32(0x7FFFFFFF)), _mm_setzero_si128()),
                         u); // -0 -> +0
    return _mm_xor_si128(u,
                         _mm_or_si128(_mm_srai_epi32(u, 31), _mm_set1_epi32(static_cast<int>(0x80000000u))));
}
#endif

// Counts digit d of every finite value's key into kCopies copies `stride` apart (value i into copy
// i % kCopies); non-finite values go to the spare slot at 1 << d.width.
template <bool Symmetric>
void countDigits(const float* v, std::int64_t n, Digit d, std::uint32_t* copies, std::size_t stride) {
    std::int64_t i = 0;
#if defined(__SSE2__)
    const __m128i mask = _mm_set1_epi32(static_cast<int>((1u << d.width) - 1u)),
                  spare = _mm_set1_epi32(1 << d.width);
    const __m128i shift = _mm_cvtsi32_si128(d.shift);
    for (; i + 4 <= n; i += 4) {
        __m128i finite;
        const __m128i key = keysOf<Symmetric>(v + i, finite);
        calib::countLanes(copies, stride,
                          calib::selectLanes(finite, _mm_and_si128(_mm_srl_epi32(key, shift), mask), spare));
    }
#endif
    for (; i < n; ++i) {
        std::uint32_t key;
        const std::size_t slot = keyOf<Symmetric>(v[i], key) ? d.of(key) : std::size_t{1} << d.width;
        ++copies[(static_cast<std::size_t>(i) % kCopies) * stride + slot];
    }
}

// Appends to keys[k] every finite value's key that shares sel[k]'s prefix (k < count).
template <bool Symmetric>
void gatherShared(const float* v, std::int64_t n, const Selection* sel, std::size_t count,
                  std::vector<std::uint32_t>* keys) {
    std::int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) {
        __m128i finite;
        const __m128i key = keysOf<Symmetric>(v + i, finite);
        for (std::size_t k = 0; k < count; ++k) {
            if (sel[k].done() || sel[k].bits == 0) continue;
            const __m128i top = _mm_srl_epi32(key, _mm_cvtsi32_si128(32 - sel[k].bits));
            const __m128i hit =
                _mm_and_si128(finite, _mm_cmpeq_epi32(top, _mm_set1_epi32(static_cast<int>(sel[k].prefix))));
            const int lanes = _mm_movemask_ps(_mm_castsi128_ps(hit));
            if (lanes == 0) continue;
            alignas(16) std::uint32_t k4[4];
            _mm_store_si128(reinterpret_cast<__m128i*>(k4), key);
            for (int l = 0; l < 4; ++l)
                if (lanes & (1 << l)) keys[k].push_back(k4[l]);
        }
    }
#endif
    for (; i < n; ++i) {
        std::uint32_t key;
        if (!keyOf<Symmetric>(v[i], key)) continue;
        for (std::size_t k = 0; k < count; ++k)
            if (!sel[k].done() && sel[k].bits > 0 && sel[k].shares(key)) keys[k].push_back(key);
    }
}

std::vector<Selection> selections(std::size_t groups, double percentile, bool symmetric) {
    std::vector<Selection> sel(groups * (symmetric ? 1 : 2));
    for (std::size_t g = 0; g < groups; ++g) {
        if (symmetric) {
            sel[g].percentile = percentile;
        } else {
            sel[2 * g].percentile = 100.0 - percentile;
            sel[2 * g + 1].percentile = percentile;
        }
    }
    return sel;
}

// ---- percentile near an end of a run: the few keys past a bound ------------------------------
//
// A run's k-th key is among its t largest keys (t = finite - k) or its t smallest (t = k + 1). When
// t is small, a first pass takes the largest (smallest) finite value of each block of 64; the t-th
// largest (smallest) of those block extremes is a bound T that at least t of the run's values reach
// (each of those t blocks holds one), so the k-th key lies at or past T. A second pass, over the run
// still in cache, gathers the keys at or past T (typically a few more than t) and counts the
// non-finite values; the k-th is picked among the gathered. The same key, and the same counts of
// keys below and above it, as the radix selection, in two vector passes: a percentile near 100 (or
// 0) is what users calibrate with.

constexpr std::int64_t kBlock = 64;     // values a block extreme stands for
constexpr std::int64_t kInsertion = 32; // up to this t, the t-th is found by insertion

// Keys from an end the k-th may be among: from the top finite - k, from the bottom k + 1. Never
// fewer for more finite values, so the count for a run all finite bounds it.
std::int64_t tailCount(double percentile, std::int64_t finite) {
    const std::int64_t rank = percentileRank(finite, percentile);
    return percentile >= 50.0 ? finite - rank : rank + 1;
}

// The t-th greatest of `ranked` (t <= its size; reordered only for t beyond kInsertion): the t
// greatest kept by insertion in one sweep, cheaper than nth_element for the small t of a
// percentile near an end.
template <typename T> T tthGreatest(std::vector<T>& ranked, std::int64_t t) {
    if (t > kInsertion) {
        const auto at = static_cast<std::ptrdiff_t>(static_cast<std::int64_t>(ranked.size()) - t);
        std::nth_element(ranked.begin(), ranked.begin() + at, ranked.end());
        return ranked[static_cast<std::size_t>(at)];
    }
    T best[kInsertion]; // best[0 .. kept) from the least kept up: once t are kept, best[0] is the t-th
    std::int64_t kept = 0;
    for (const T r : ranked) {
        std::int64_t j;
        if (kept < t) { // filling: in from the greatest end
            for (j = kept++; j > 0 && best[j - 1] > r; --j)
                best[j] = best[j - 1];
        } else if (r > best[0]) { // full: best[0] drops out, the value sinks into place
            for (j = 0; j + 1 < t && r > best[j + 1]; ++j)
                best[j] = best[j + 1];
        } else {
            continue;
        }
        best[j] = r;
    }
    return best[0];
}

// One tail's keys as the second pass gathers them. Keys are ranked as `key ^ order`, signed, so the
// tail's end is the greatest for either tail: the top's keys with their top bit flipped (unsigned
// order as signed), the bottom's also inverted.
struct Tail {
    std::uint32_t order = 0;
    std::int32_t bound = 0;                    // ranked: keys at or past it are gathered
    std::vector<std::int32_t>* keys = nullptr; // ranked

    bool top() const { return order == 0x80000000u; }
    std::int32_t ranked(std::uint32_t key) const { return static_cast<std::int32_t>(key ^ order); }
    std::uint32_t key(std::int32_t r) const { return static_cast<std::uint32_t>(r) ^ order; }
};

// A selection's tails: both ends for asymmetric ranges, the magnitudes' top for symmetric ones.
template <bool Symmetric> constexpr std::size_t kTails = Symmetric ? 1 : 2;

// Each block's greatest and least finite value, appended to greatest / least (the magnitudes' are
// calib::absMaxOfBlocks). A block with no finite value gives the far ends, -FLT_MAX and FLT_MAX,
// which only loosen the bound: every finite key lies at or past them.
void blockRanges(const float* v, std::int64_t n, std::vector<float>& greatest, std::vector<float>& least) {
    constexpr float kFar = std::numeric_limits<float>::max();
    for (std::int64_t b = 0; b < n; b += kBlock) {
        const std::int64_t end = std::min(n, b + kBlock);
        float hi = -kFar, lo = kFar;
        std::int64_t i = b;
#if defined(__SSE2__)
        const __m128i absMask = _mm_set1_epi32(0x7FFFFFFF), inf = _mm_set1_epi32(0x7F800000);
        __m128 vhi = _mm_set1_ps(hi), vlo = _mm_set1_ps(lo);
        for (; i + 4 <= end; i += 4) {
            const __m128 x = _mm_loadu_ps(v + i);
            // (|v|'s bits order as signed integers)
            const __m128 f =
                _mm_castsi128_ps(_mm_cmpgt_epi32(inf, _mm_and_si128(_mm_castps_si128(x), absMask)));
            vhi = _mm_max_ps(vhi, _mm_or_ps(_mm_and_ps(f, x), _mm_andnot_ps(f, _mm_set1_ps(-kFar))));
            vlo = _mm_min_ps(vlo, _mm_or_ps(_mm_and_ps(f, x), _mm_andnot_ps(f, _mm_set1_ps(kFar))));
        }
        alignas(16) float h4[4], l4[4];
        _mm_store_ps(h4, vhi);
        _mm_store_ps(l4, vlo);
        for (int l = 0; l < 4; ++l)
            hi = std::max(hi, h4[l]), lo = std::min(lo, l4[l]);
#endif
        for (; i < end; ++i) {
            if (!std::isfinite(v[i])) continue;
            hi = std::max(hi, v[i]);
            lo = std::min(lo, v[i]);
        }
        greatest.push_back(hi);
        least.push_back(lo);
    }
}

// Whether a key stands for Inf or NaN at the end of its tail: every such key lies beyond all finite
// keys at one end of the order (magnitudes: the top; values: +Inf and +NaN the top, -Inf and -NaN
// the bottom), so the tail reaching that end passes each of them, once.
template <bool Symmetric> bool nonFiniteAtEnd(std::uint32_t key, bool top) {
    if (Symmetric) return key >= 0xFF000000u;
    return top ? key >= 0xFF800000u : key <= 0x007FFFFFu;
}

// Appends to each tail's keys every finite key of v at or past its bound, and counts the values
// that are not finite. Those are never tested apart: each lies past a bound at its end of the
// order, so only the keys that pass are checked. (The tail count is a constant, so the bounds stay
// in registers.)
template <bool Symmetric>
void gatherTails(const float* v, std::int64_t n, Tail* tails, std::int64_t& nonFinite) {
    constexpr std::size_t count = kTails<Symmetric>;
    auto take = [&](std::size_t k, std::uint32_t key) {
        if (nonFiniteAtEnd<Symmetric>(key, tails[k].top()))
            ++nonFinite;
        else if (!nonFiniteAtEnd<Symmetric>(key, !tails[k].top()))
            tails[k].keys->push_back(tails[k].ranked(key));
    };
    std::int64_t i = 0;
#if defined(__SSE2__)
    __m128i order[count], bound[count];
    for (std::size_t k = 0; k < count; ++k) {
        order[k] = _mm_set1_epi32(static_cast<int>(tails[k].order));
        bound[k] = _mm_set1_epi32(tails[k].bound);
    }
    for (; i + 4 <= n; i += 4) {
        __m128i finite;
        const __m128i key = keysOf<Symmetric>(v + i, finite); // (finite unused: see above)
        for (std::size_t k = 0; k < count; ++k) {
            const __m128i shortOf = _mm_cmpgt_epi32(bound[k], _mm_xor_si128(key, order[k]));
            const int lanes = ~_mm_movemask_ps(_mm_castsi128_ps(shortOf)) & 0xF;
            if (lanes == 0) [[likely]]
                continue;
            alignas(16) std::uint32_t k4[4];
            _mm_store_si128(reinterpret_cast<__m128i*>(k4), key);
            for (int l = 0; l < 4; ++l)
                if (lanes & (1 << l)) take(k, k4[l]);
        }
    }
#endif
    for (; i < n; ++i) {
        std::uint32_t key;
        if (!keyOf<Symmetric>(v[i], key)) {
            ++nonFinite;
            continue;
        }
        for (std::size_t k = 0; k < count; ++k)
            if (tails[k].ranked(key) >= tails[k].bound) take(k, key);
    }
}

// A run's selections (one, or both tails for asymmetric) finished from their tails; false, with
// nothing changed, when a tail is too long for a block's extreme to stand for it.
template <bool Symmetric>
bool selectTails(calib::Tile& tile, std::int64_t begin, std::int64_t length, Selection* sel) {
    constexpr std::size_t per = kTails<Symmetric>;
    std::int64_t most[per]; // each tail's t for a run all finite: at most one a block
    bool top[per];
    for (std::size_t k = 0; k < per; ++k) {
        most[k] = tailCount(sel[k].percentile, length);
        top[k] = sel[k].percentile >= 50.0;
        if (most[k] * kBlock > length) return false;
    }
    // Each non-finite value is counted by the tail at its end: magnitudes need the top one, values
    // one at each end.
    if (Symmetric ? !top[0] : top[0] == top[per - 1]) return false;
    thread_local std::vector<float> greatest, least;
    thread_local std::vector<std::int32_t> gathered[2], ranked;
    greatest.clear();
    least.clear();
    const float* const run = tile.whole(begin, length); // (read twice: widened once)
    if (Symmetric) { // (a block holding a NaN has its maximum negated: its key is the magnitude's all the
                     // same)
        greatest.resize(static_cast<std::size_t>((length + kBlock - 1) / kBlock));
        calib::absMaxOfBlocks(run, length, kBlock, greatest.data());
    } else {
        blockRanges(run, length, greatest, least);
    }
    Tail tails[per];
    for (std::size_t k = 0; k < per; ++k) {
        tails[k].order = top[k] ? 0x80000000u : 0x7FFFFFFFu;
        tails[k].keys = &gathered[k];
        gathered[k].clear();
        ranked.clear();
        for (const float x : top[k] ? greatest : least) {
            std::uint32_t key = 0;
            keyOf<Symmetric>(x, key); // (finite: the far ends are finite too)
            ranked.push_back(tails[k].ranked(key));
        }
        tails[k].bound = tthGreatest(ranked, most[k]);
    }
    std::int64_t nonFinite = 0;
    gatherTails<Symmetric>(run, length, tails, nonFinite);
    const std::int64_t finite = length - nonFinite;
    if (finite == 0) return false; // (the radix selection's answer for no values)
    // (Neither can fail: a tail's count never grows with fewer finite values, and the bound gathers
    // at least that many keys.)
    for (std::size_t k = 0; k < per; ++k) {
        const std::int64_t t = tailCount(sel[k].percentile, finite);
        if (t > most[k] || t > static_cast<std::int64_t>(tails[k].keys->size())) return false;
    }
    for (std::size_t k = 0; k < per; ++k) {
        const Tail& tail = tails[k];
        std::vector<std::int32_t>& keys = *tail.keys;
        const std::int32_t kth = tthGreatest(keys, tailCount(sel[k].percentile, finite));
        std::int64_t nearer = 0, further = 0; // gathered keys short of the k-th, and beyond it
        for (const std::int32_t r : keys) {
            nearer += r < kth;
            further += r > kth;
        }
        // The gathered keys hold every key beyond the k-th; the finite keys not gathered are short of it.
        nearer += finite - static_cast<std::int64_t>(keys.size());
        Selection& s = sel[k];
        s.finite = finite;
        s.rank = percentileRank(finite, s.percentile);
        s.prefix = tail.key(kth);
        s.bits = 32;
        s.below = tail.top() ? nearer : further;
        s.above = tail.top() ? further : nearer;
    }
    return true;
}

// A run's selections by radix: the top digit's histogram, then the keys of its bucket gathered (or,
// for a bucket too full, more digit passes).
template <bool Symmetric>
void selectByDigits(calib::Tile& tile, std::int64_t begin, std::int64_t length, std::vector<Selection>& sel) {
    constexpr std::size_t per = Symmetric ? 1 : 2;
    thread_local std::vector<std::uint32_t> copies, hist, keys[per];
    // The top digit (the same histogram for both tails): the exponent alone for short runs,
    // whose bucket is then small enough to gather.
    const int topBits = length < (1 << 14) ? 8 : kDigitBits;
    const std::size_t buckets = std::size_t{1} << topBits;
    copies.assign(kCopies * (buckets + 1), 0u);
    const Digit top{32 - topBits, topBits};
    tile.forEach(begin, length, [&](const float* v, std::int64_t n) {
        countDigits<Symmetric>(v, n, top, copies.data(), buckets + 1);
    });
    sumCopies(copies.data(), buckets, buckets + 1, hist);
    for (auto& s : sel)
        narrow(s, hist.data(), topBits);
    std::int64_t inBuckets = 0;
    for (const auto& s : sel)
        inBuckets += s.inBucket;
    if (inBuckets <= std::max<std::int64_t>(1024, length / 2)) {
        for (auto& k : keys)
            k.clear();
        tile.forEach(begin, length, [&](const float* v, std::int64_t n) {
            gatherShared<Symmetric>(v, n, sel.data(), per, keys);
        });
        for (std::size_t k = 0; k < per; ++k)
            finish(sel[k], keys[k]);
    }
    for (std::size_t k = 0; k < per; ++k) {
        while (!sel[k].done()) {
            const Digit d = nextDigit(sel[k], kDigitBits);
            hist.assign(std::size_t{1} << d.width, 0u);
            tile.forEach(begin, length, [&](const float* v, std::int64_t n) {
                for (std::int64_t i = 0; i < n; ++i) {
                    std::uint32_t key;
                    if (keyOf<Symmetric>(v[i], key) && sel[k].shares(key)) ++hist[d.of(key)];
                }
            });
            narrow(sel[k], hist.data(), d.width);
        }
    }
}

// Groups that are one contiguous run each: selected run by run while the run is in cache.
template <bool Symmetric>
void percentileRuns(const Scan& scan, double percentile, std::vector<GroupClip>& clips,
                    std::vector<GroupRange>& counts) {
    scan.forRuns([&](std::int64_t group, std::int64_t begin, std::int64_t length, calib::Tile& tile) {
        const auto g = static_cast<std::size_t>(group);
        clips[g] = calib::percentileOfRun(tile, begin, length, percentile, Symmetric, true, counts[g].finite);
    });
}

// Any layout: every group's selection advances together, one pass over the tensor per step.
template <bool Symmetric>
void percentileStreaming(const Scan& scan, std::int64_t elements, double percentile,
                         std::vector<GroupClip>& clips, std::vector<GroupRange>& counts) {
    const std::size_t groups = clips.size(), per = Symmetric ? 1 : 2, slots = groups * per;
    auto sel = selections(groups, percentile, Symmetric);
    // Histograms stay near 4 MB per worker: narrower digits (more passes) for many groups.
    int bits = kDigitBits;
    while (bits > 4 && (groups * kCopies << bits) > (std::size_t{1} << 20))
        --bits;
    {
        const Digit top{32 - bits, bits};
        const std::size_t buckets = std::size_t{1} << bits, region = kCopies * (buckets + 1);
        // Locals, not captures: stores into the histogram must not make the loop reload its constants.
        const auto hist = scan.count(groups * region, [top, buckets, region](
                                                          std::uint32_t* h, std::int64_t group,
                                                          const float* v, std::int64_t n, bool perElement) {
            if (!perElement) {
                countDigits<Symmetric>(v, n, top, h + static_cast<std::size_t>(group) * region, buckets + 1);
                return;
            }
            for (std::int64_t i = 0; i < n; ++i) {
                std::uint32_t key;
                if (keyOf<Symmetric>(v[i], key))
                    ++h[static_cast<std::size_t>(group + i) * region + top.of(key)];
            }
        });
        std::vector<std::uint32_t> folded;
        for (std::size_t g = 0; g < groups; ++g) {
            sumCopies(hist.data() + g * region, buckets, buckets + 1, folded);
            for (std::size_t k = 0; k < per; ++k)
                narrow(sel[g * per + k], folded.data(), bits);
        }
    }
    std::int64_t inBuckets = 0;
    for (const auto& s : sel)
        inBuckets += s.inBucket;
    if (inBuckets <= elements / 16 + 4096 && slots <= (std::size_t{1} << 16)) {
        auto keys = scan.collect<std::uint32_t>(
            slots, [&](auto& lists, std::int64_t group, const float* v, std::int64_t n, bool perElement) {
                if (!perElement) {
                    gatherShared<Symmetric>(v, n, sel.data() + static_cast<std::size_t>(group) * per, per,
                                            lists.data() + static_cast<std::size_t>(group) * per);
                    return;
                }
                for (std::int64_t i = 0; i < n; ++i) {
                    std::uint32_t key;
                    if (!keyOf<Symmetric>(v[i], key)) continue;
                    const std::size_t base = static_cast<std::size_t>(perElement ? group + i : group) * per;
                    for (std::size_t k = 0; k < per; ++k)
                        if (sel[base + k].shares(key)) lists[base + k].push_back(key);
                }
            });
        for (std::size_t s = 0; s < slots; ++s)
            finish(sel[s], keys[s]);
    }
    for (;;) {
        bool left = false;
        for (const auto& s : sel)
            left = left || !s.done();
        if (!left) break;
        const std::size_t buckets = std::size_t{1} << bits;
        const auto hist = scan.count(slots * buckets, [&](std::uint32_t* h, std::int64_t group,
                                                          const float* v, std::int64_t n, bool perElement) {
            for (std::int64_t i = 0; i < n; ++i) {
                std::uint32_t key;
                if (!keyOf<Symmetric>(v[i], key)) continue;
                const std::size_t base = static_cast<std::size_t>(perElement ? group + i : group) * per;
                for (std::size_t k = 0; k < per; ++k)
                    if (!sel[base + k].done() && sel[base + k].shares(key))
                        ++h[(base + k) * buckets + nextDigit(sel[base + k], bits).of(key)];
            }
        });
        for (std::size_t s = 0; s < slots; ++s)
            if (!sel[s].done()) narrow(sel[s], hist.data() + s * buckets, nextDigit(sel[s], bits).width);
    }
    for (std::size_t g = 0; g < groups; ++g) {
        clips[g] = selectionResult(sel.data() + g * per, Symmetric);
        counts[g].finite = sel[g * per].finite;
    }
}

// ---- MSE and entropy: one histogram pass, then the shared search per group -------------------

std::vector<GroupClip> histogramSearch(const Scan& scan, const ResolvedSpec& plan,
                                       const std::vector<GroupRange>& ranges) {
    const bool mse = plan.spec.calibration.method == CalibMethod::Mse;
    const int levels = entropyLevels(plan);
    const std::size_t groups = ranges.size();
    std::vector<HistogramGeometry> geo(groups);
    std::vector<std::size_t> offset(groups + 1, 0);
    for (std::size_t g = 0; g < groups; ++g) {
        geo[g] = mse ? mseGeometry(ranges[g], plan.spec.symmetric) : entropyGeometry(ranges[g], levels);
        offset[g + 1] =
            offset[g] + (geo[g].bins > 0 ? kCopies * (static_cast<std::size_t>(geo[g].bins) + 1) : 0);
    }
    const auto count = [&](std::uint32_t* h, std::int64_t group, const float* v, std::int64_t n,
                           bool perElement) {
        if (!perElement) {
            const HistogramGeometry& gg = geo[static_cast<std::size_t>(group)];
            if (gg.bins > 0)
                calib::countBins(v, n, gg, !mse, h + offset[static_cast<std::size_t>(group)], false);
            return;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const auto g = static_cast<std::size_t>(group + i);
            if (geo[g].bins == 0 || !std::isfinite(v[i])) continue;
            ++h[offset[g] + static_cast<std::size_t>(geo[g].binOf(mse ? v[i] : std::fabs(v[i])))];
        }
    };
    const auto hist = scan.count(offset[groups], count);
    std::vector<GroupClip> clips(groups);
    scan.forSlices(static_cast<std::int64_t>(groups), [&](std::int64_t g0, std::int64_t g1) {
        std::vector<std::uint32_t> h;
        for (auto g = static_cast<std::size_t>(g0); g < static_cast<std::size_t>(g1); ++g) {
            const auto bins = static_cast<std::size_t>(geo[g].bins);
            sumCopies(hist.data() + offset[g], bins, bins + 1, h);
            clips[g] = mse ? mseSearch(ranges[g], h, plan) : entropySearch(ranges[g], h, levels);
        }
    });
    return clips;
}

// One run's range, histogram and search: the GroupClip, with the range through `range`.
GroupClip histogramSearchOfRun(const float* run, std::int64_t length, const ResolvedSpec& plan,
                               GroupRange& range) {
    const bool mse = plan.spec.calibration.method == CalibMethod::Mse;
    const int levels = entropyLevels(plan);
    GroupRange r;
    calib::rangeOfRun(run, length, r);
    range = r;
    const HistogramGeometry geo = mse ? mseGeometry(r, plan.spec.symmetric) : entropyGeometry(r, levels);
    const auto bins = static_cast<std::size_t>(geo.bins);
    thread_local std::vector<std::uint32_t> copies, hist;
    copies.assign(kCopies * (bins + 1), 0u);
    if (bins > 0) calib::countBins(run, length, geo, !mse, copies.data(), r.finite == length);
    sumCopies(copies.data(), bins, bins + 1, hist);
    return mse ? mseSearch(r, hist, plan) : entropySearch(r, hist, levels);
}

// Groups that are one run each: range, histogram and search per run while it is in cache, so the
// tensor is read from memory once and no histogram array for all groups is ever built.
void histogramSearchRuns(const Scan& scan, const ResolvedSpec& plan, std::vector<GroupClip>& clips,
                         std::vector<GroupRange>& ranges) {
    scan.forRuns([&](std::int64_t group, std::int64_t begin, std::int64_t length, calib::Tile& tile) {
        const auto g = static_cast<std::size_t>(group);
        clips[g] = histogramSearchOfRun(tile.whole(begin, length), length, plan, ranges[g]); // (widened once)
    });
}

// Strided groups (columns, an RNN's middle axis): each gathered into a run (Scan::forStridedGroups),
// then searched as runs are. (Counted in place, a row touched every column's histogram: megabytes of
// them, missing the cache.)
void histogramSearchStrided(const Scan& scan, const ResolvedSpec& plan, std::vector<GroupClip>& clips,
                            std::vector<GroupRange>& ranges) {
    scan.forStridedGroups([&](std::int64_t group, const float* values, std::int64_t count) {
        const auto g = static_cast<std::size_t>(group);
        clips[g] = histogramSearchOfRun(values, count, plan, ranges[g]);
    });
}

// Strided groups, selected as runs are once gathered.
void percentileStrided(const Scan& scan, double percentile, bool symmetric, std::vector<GroupClip>& clips,
                       std::vector<GroupRange>& counts) {
    scan.forStridedGroups([&](std::int64_t group, const float* values, std::int64_t count) {
        const auto g = static_cast<std::size_t>(group);
        calib::Tile tile(calib::Input{reinterpret_cast<const std::byte*>(values), DType::F32});
        clips[g] = calib::percentileOfRun(tile, 0, count, percentile, symmetric, true, counts[g].finite);
    });
}

// ---- MX / NVFP4 --------------------------------------------------------------------------------

QuantParams blockParams(const Scan& scan, const ResolvedSpec& plan) {
    const RangeRule rule(plan); // mxScaleCode / nvfp4ScaleCode and blockScale, as the cpu backend
    QuantParams p = rule.emptyParams();
    if (!rule.needsTensorAmax() && scan.blocksAlongRows()) { // MX: each block's code in the same pass
        const std::int64_t block = scan.blockLength();
        scan.forBlockTiles([&](std::int64_t first, const float* v, std::int64_t n) {
            float amax[calib::kTile];
            calib::absMaxOfBlocks(v, n, block, amax);
            rule.applyBlocks(amax, first, (n + block - 1) / block, p);
        });
    } else {
        // Each block's maximum where its scale goes (applyBlocks reads it before writing the scale):
        // NVFP4's million blocks need no table of their own, in fresh pages.
        const float* amax = p.scales.data();
        scan.absMaxOrNan(p.scales.data());
        if (rule.needsTensorAmax()) {
            float top[8] = {}; // eight running maxima, so the loop is not one long dependency chain
            for (std::int64_t g = 0; g < plan.scaleCount; ++g)
                top[g % 8] = std::max(top[g % 8], std::fabs(amax[g]));
            rule.setTensorAmax(*std::max_element(top, top + 8), p);
        }
        scan.forSlices(plan.scaleCount, [&](std::int64_t g0, std::int64_t g1) {
            rule.applyBlocks(amax + g0, g0, g1 - g0, p);
        });
    }
    if (plan.spec.calibration.method == CalibMethod::Mse) {
        const MiniFloatCodec elements(miniFloatOf(plan.codeTarget), plan.convention.overflow);
        const bool divides = plan.convention.scaleOp == ScaleOp::Divide;
        scan.forGroupValues([&](std::int64_t group, std::span<const float> finite) {
            const auto g = static_cast<std::size_t>(group);
            p.scaleCodes[g] =
                mseBlockCode(finite, p.scaleCodes[g], p.tensorScale, plan, divides ? &elements : nullptr);
            p.scales[g] = blockScale(plan, p.scaleCodes[g], p.tensorScale);
        });
    }
    return p;
}

} // namespace

GroupClip calib::percentileOfRun(Tile& tile, std::int64_t begin, std::int64_t length, double percentile,
                                 bool symmetric, bool fromTails, std::int64_t& finite) {
    auto sel = selections(1, percentile, symmetric);
    const auto select = [&]<bool Symmetric>() {
        if (!fromTails || !selectTails<Symmetric>(tile, begin, length, sel.data()))
            selectByDigits<Symmetric>(tile, begin, length, sel);
    };
    symmetric ? select.template operator()<true>() : select.template operator()<false>();
    finite = sel[0].finite;
    return selectionResult(sel.data(), symmetric);
}

QuantParams calibrateFast(const ResolvedSpec& plan, const void* data, DType dtype, unsigned threads) {
    if (dtype != DType::F32 && dtype != DType::BF16 && dtype != DType::F16)
        throw QuantError("calibration reads f32, bf16 or f16 in place; widen other dtypes first");
    if (elementCount(plan.shape) == 0 || plan.shape.empty()) { // nothing to split: the oracle reads it
        const Input in{static_cast<const std::byte*>(data), dtype};
        std::vector<float> x(static_cast<std::size_t>(elementCount(plan.shape)));
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = in.at(static_cast<std::int64_t>(i));
        return calibrate(plan, x);
    }
    const bool blocks = isBlockFormat(plan.spec.preset);
    if (!blocks) checkCalibrationRequest(plan);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const Scan scan(plan, Input{static_cast<const std::byte*>(data), dtype}, threads);
    if (blocks) return blockParams(scan, plan);
    const Calibration& cal = plan.spec.calibration;
    const auto groups = static_cast<std::size_t>(plan.scaleCount);
    std::vector<GroupClip> clips(groups);
    std::vector<GroupRange> ranges;
    if (cal.method == CalibMethod::Percentile) { // the selections count the finite values the note needs
        ranges.resize(groups);
        const std::int64_t n = elementCount(plan.shape);
        if (scan.groupsAreRuns())
            plan.spec.symmetric ? percentileRuns<true>(scan, cal.percentile, clips, ranges)
                                : percentileRuns<false>(scan, cal.percentile, clips, ranges);
        else if (scan.groupsAreStrided())
            percentileStrided(scan, cal.percentile, plan.spec.symmetric, clips, ranges);
        else
            plan.spec.symmetric ? percentileStreaming<true>(scan, n, cal.percentile, clips, ranges)
                                : percentileStreaming<false>(scan, n, cal.percentile, clips, ranges);
        return paramsFromClips(plan, clips, ranges);
    }
    if ((cal.method == CalibMethod::Mse || cal.method == CalibMethod::Entropy) &&
        (scan.groupsAreRuns() || scan.groupsAreStrided())) {
        ranges.resize(groups);
        scan.groupsAreRuns() ? histogramSearchRuns(scan, plan, clips, ranges)
                             : histogramSearchStrided(scan, plan, clips, ranges);
        return paramsFromClips(plan, clips, ranges);
    }
    ranges = scan.ranges();
    if (cal.method == CalibMethod::AbsMax || cal.method == CalibMethod::MinMax)
        for (std::size_t g = 0; g < groups; ++g)
            clips[g].range = {ranges[g].lo, ranges[g].hi};
    else
        clips = histogramSearch(scan, plan, ranges);
    return paramsFromClips(plan, clips, ranges);
}

} // namespace ql
