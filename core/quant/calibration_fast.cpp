// The fast calibrators: the oracle's answers (calibration.cpp) from the tensor in place, with
// threads. Every pass accumulates only integer counts and min / max per group, and every search
// after it is the shared per-group code in calibration_search.cpp, so the result is the oracle's
// bit for bit and does not depend on how the work was split.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "quant/calibration.h"
#include "quant/calibration_scan.h"
#include "quant/calibration_search.h"
#include "quant/row_walker.h"

namespace ql {
namespace {

using calib::Input;
using calib::Scan;

// ---- percentile: radix selection on order-preserving keys ------------------------------------

// One k-th value search: the key bits chosen so far, the rank left inside them, and how many
// elements fell below / above the chosen bucket (for the clipped count).
struct Selection {
    double percentile = 0.0;
    std::uint32_t prefix = 0;
    std::int64_t rank = 0;
    std::int64_t below = 0;
    std::int64_t above = 0;
    std::int64_t finite = -1; // unknown until the first pass
};

// Picks the bucket that holds the selection's rank from its histogram of the next digit.
void narrow(Selection& s, const std::uint32_t* hist, int width) {
    const std::int64_t buckets = std::int64_t{1} << width;
    if (s.finite < 0) {
        s.finite = 0;
        for (std::int64_t d = 0; d < buckets; ++d) s.finite += hist[d];
        s.rank = s.finite > 0 ? percentileRank(s.finite, s.percentile) : 0;
    }
    if (s.finite == 0) return;
    std::int64_t cum = 0, total = 0;
    for (std::int64_t d = 0; d < buckets; ++d) total += hist[d];
    for (std::int64_t d = 0; d < buckets; ++d) {
        if (cum + hist[d] > s.rank) {
            s.below += cum;
            s.above += total - cum - hist[d];
            s.rank -= cum;
            s.prefix = static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.prefix) << width) | static_cast<std::uint64_t>(d));
            return;
        }
        cum += hist[d];
    }
}

// Digit widths covering 32 key bits in as few passes as digits of at most `bits` allow, evenly.
std::vector<int> digitWidths(int bits) {
    const int passes = (32 + bits - 1) / bits;
    std::vector<int> w;
    for (int p = 0, left = 32; p < passes; ++p) {
        w.push_back((left + (passes - p) - 1) / (passes - p));
        left -= w.back();
    }
    return w;
}

struct DigitPass {
    int shift;     // bits below the digit
    int width;
    bool first;    // no prefix to match yet
    std::uint32_t digit(std::uint32_t key) const { return (key >> shift) & ((1u << width) - 1u); }
    bool matches(std::uint32_t key, std::uint32_t prefix) const {
        return first || (key >> (shift + width)) == prefix;
    }
};

GroupClip selectionResult(const std::vector<Selection>& s, bool symmetric) {
    GroupClip c;
    if (symmetric) {
        if (s[0].finite <= 0) return c;
        const double a = fromMagnitudeKey(s[0].prefix);
        c.range = {-a, a};
        c.clipped = s[0].above;
        return c;
    }
    if (s[0].finite <= 0) return c;
    c.range = {fromOrderedKey(s[0].prefix), fromOrderedKey(s[1].prefix)};
    c.clipped = std::min(s[0].finite, s[0].below + s[1].above);
    return c;
}

template <bool Symmetric>
inline bool keyOf(float v, std::uint32_t& key) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    if ((u & 0x7F800000u) == 0x7F800000u) return false;
    if (!Symmetric && (u & 0x7FFFFFFFu) == 0) u = 0; // -0 == +0, as the oracle's comparisons see it
    key = Symmetric ? (u << 1) : ((u & 0x80000000u) ? ~u : (u | 0x80000000u));
    return true;
}

// Groups that are one contiguous run each: selected run by run while the run is in cache.
template <bool Symmetric>
void percentileRuns(const Scan& scan, double percentile, std::vector<GroupClip>& clips) {
    const std::vector<int> widths = digitWidths(11);
    scan.forRuns([&](std::int64_t group, std::int64_t begin, std::int64_t length, calib::Tile& tile) {
        std::vector<Selection> sel(Symmetric ? 1 : 2);
        sel[0].percentile = Symmetric ? percentile : 100.0 - percentile;
        if (!Symmetric) sel[1].percentile = percentile;
        std::vector<std::uint32_t> hist(sel.size() << 11);
        int shift = 32;
        for (std::size_t p = 0; p < widths.size(); ++p) {
            shift -= widths[p];
            const DigitPass pass{shift, widths[p], p == 0};
            std::fill(hist.begin(), hist.end(), 0u);
            tile.forEach(begin, length, [&](const float* v, std::int64_t n) {
                for (std::int64_t i = 0; i < n; ++i) {
                    std::uint32_t key;
                    if (!keyOf<Symmetric>(v[i], key)) continue;
                    for (std::size_t k = 0; k < sel.size(); ++k)
                        if (pass.matches(key, sel[k].prefix)) ++hist[(k << 11) + pass.digit(key)];
                }
            });
            for (std::size_t k = 0; k < sel.size(); ++k) narrow(sel[k], hist.data() + (k << 11), widths[p]);
        }
        clips[static_cast<std::size_t>(group)] = selectionResult(sel, Symmetric);
    });
}

// Any layout: every group's selection advances one digit per pass over the whole tensor.
template <bool Symmetric>
void percentileStreaming(const Scan& scan, double percentile, std::vector<GroupClip>& clips) {
    const std::size_t groups = clips.size(), per = Symmetric ? 1 : 2, slots = groups * per;
    // Histogram memory per worker stays near 1 MB: wide digits (few passes) for few groups.
    int bits = 16;
    while (bits > 4 && (slots << bits) > (std::size_t{1} << 18)) --bits;
    const std::vector<int> widths = digitWidths(bits);
    std::vector<Selection> sel(slots);
    for (std::size_t g = 0; g < groups; ++g) {
        sel[g * per].percentile = Symmetric ? percentile : 100.0 - percentile;
        if (!Symmetric) sel[g * per + 1].percentile = percentile;
    }
    int shift = 32;
    for (std::size_t p = 0; p < widths.size(); ++p) {
        shift -= widths[p];
        const DigitPass pass{shift, widths[p], p == 0};
        const std::size_t buckets = std::size_t{1} << widths[p];
        const auto hist = scan.count(slots * buckets, [&](std::uint32_t* h, std::int64_t group, const float* v,
                                                                   std::int64_t n, bool perElement) {
            for (std::int64_t i = 0; i < n; ++i) {
                std::uint32_t key;
                if (!keyOf<Symmetric>(v[i], key)) continue;
                const std::size_t base = static_cast<std::size_t>(perElement ? group + i : group) * per;
                for (std::size_t k = 0; k < per; ++k)
                    if (pass.matches(key, sel[base + k].prefix)) ++h[(base + k) * buckets + pass.digit(key)];
            }
        });
        for (std::size_t s = 0; s < slots; ++s) narrow(sel[s], hist.data() + s * buckets, widths[p]);
    }
    for (std::size_t g = 0; g < groups; ++g)
        clips[g] = selectionResult({sel.begin() + static_cast<std::ptrdiff_t>(g * per),
                                    sel.begin() + static_cast<std::ptrdiff_t>((g + 1) * per)},
                                   Symmetric);
}

// ---- MSE and entropy: one histogram pass, then the shared search per group -------------------

std::vector<GroupClip> histogramSearch(const Scan& scan, const QuantPlan& plan, const std::vector<GroupRange>& ranges) {
    const bool mse = plan.spec.calibration.method == CalibMethod::Mse;
    const int levels = entropyLevels(plan);
    const std::size_t groups = ranges.size();
    std::vector<HistogramGeometry> geo(groups);
    std::vector<std::size_t> offset(groups + 1, 0);
    for (std::size_t g = 0; g < groups; ++g) {
        geo[g] = mse ? mseGeometry(ranges[g], plan.spec.symmetric) : entropyGeometry(ranges[g], levels);
        offset[g + 1] = offset[g] + static_cast<std::size_t>(geo[g].bins);
    }
    const auto count = [&](std::uint32_t* h, std::int64_t group, const float* v, std::int64_t n, bool perElement) {
        if (!perElement) {
            const HistogramGeometry& gg = geo[static_cast<std::size_t>(group)];
            if (gg.bins == 0) return;
            std::uint32_t* hg = h + offset[static_cast<std::size_t>(group)];
            for (std::int64_t i = 0; i < n; ++i) {
                if (!std::isfinite(v[i])) continue;
                ++hg[gg.binOf(mse ? static_cast<double>(v[i]) : static_cast<double>(std::fabs(v[i])))];
            }
            return;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const auto g = static_cast<std::size_t>(group + i);
            if (geo[g].bins == 0 || !std::isfinite(v[i])) continue;
            ++h[offset[g] + static_cast<std::size_t>(geo[g].binOf(mse ? static_cast<double>(v[i])
                                                                        : static_cast<double>(std::fabs(v[i]))))];
        }
    };
    const auto hist = scan.count(offset[groups], count);
    std::vector<GroupClip> clips(groups);
    scan.forSlices(static_cast<std::int64_t>(groups), [&](std::int64_t g0, std::int64_t g1) {
        for (auto g = static_cast<std::size_t>(g0); g < static_cast<std::size_t>(g1); ++g) {
            const std::span<const std::uint32_t> h(hist.data() + offset[g], offset[g + 1] - offset[g]);
            clips[g] = mse ? mseSearch(ranges[g], h, plan) : entropySearch(ranges[g], h, levels);
        }
    });
    return clips;
}

// ---- MX / NVFP4 --------------------------------------------------------------------------------

QuantParams blockParams(const Scan& scan, const QuantPlan& plan, const std::vector<GroupRange>& ranges) {
    const bool mx = plan.spec.preset == Preset::MX;
    QuantParams p;
    if (!mx) {
        float amax = 0.0f;
        for (const auto& g : ranges) amax = std::max(amax, g.absMax());
        p.tensorScale = nvfp4TensorScale(amax);
    }
    const int emax = mx ? maxExponent(miniFloatOf(plan.codeTarget)) : 0;
    const std::size_t groups = ranges.size();
    p.scaleCodes.resize(groups);
    p.scales.resize(groups);
    scan.forSlices(static_cast<std::int64_t>(groups), [&](std::int64_t g0, std::int64_t g1) {
        for (auto g = static_cast<std::size_t>(g0); g < static_cast<std::size_t>(g1); ++g)
            p.scaleCodes[g] = mx ? mxScaleCode(ranges[g], emax) : nvfp4ScaleCode(ranges[g].absMax(), p.tensorScale);
    });
    if (plan.spec.calibration.method == CalibMethod::Mse) {
        const auto search = [&](std::int64_t group, std::span<const float> finite) {
            auto& code = p.scaleCodes[static_cast<std::size_t>(group)];
            code = mseBlockCode(finite, code, p.tensorScale, plan);
        };
        scan.forGroupValues(search);
    }
    for (std::size_t g = 0; g < groups; ++g) p.scales[g] = blockScale(plan, p.scaleCodes[g], p.tensorScale);
    return p;
}

} // namespace

QuantParams calibrateFast(const QuantPlan& plan, const void* data, DType dtype, unsigned threads) {
    if (elementCount(plan.shape) == 0 || plan.shape.empty()) { // nothing to split: the oracle reads it
        const Input in{static_cast<const std::byte*>(data), dtype};
        std::vector<float> x(static_cast<std::size_t>(elementCount(plan.shape)));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = in.at(static_cast<std::int64_t>(i));
        return calibrate(plan, x);
    }
    const bool blocks = plan.spec.preset == Preset::MX || plan.spec.preset == Preset::NVFP4;
    if (!blocks) checkCalibrationRequest(plan);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const Scan scan(plan, Input{static_cast<const std::byte*>(data), dtype}, threads);
    const auto ranges = scan.ranges();
    if (blocks) return blockParams(scan, plan, ranges);

    const Calibration& cal = plan.spec.calibration;
    std::vector<GroupClip> clips(ranges.size());
    switch (cal.method) {
    case CalibMethod::AbsMax:
    case CalibMethod::MinMax:
        for (std::size_t g = 0; g < ranges.size(); ++g) clips[g].range = {ranges[g].lo, ranges[g].hi};
        break;
    case CalibMethod::Percentile:
        if (scan.groupsAreRuns())
            plan.spec.symmetric ? percentileRuns<true>(scan, cal.percentile, clips)
                                : percentileRuns<false>(scan, cal.percentile, clips);
        else
            plan.spec.symmetric ? percentileStreaming<true>(scan, cal.percentile, clips)
                                : percentileStreaming<false>(scan, cal.percentile, clips);
        break;
    default: clips = histogramSearch(scan, plan, ranges); break;
    }
    return paramsFromClips(plan, clips, ranges);
}

} // namespace ql
