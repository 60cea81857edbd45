#include "quant/calibration_search.h"

#include "base/error.h"
#include "quant/calibration.h"
#include "quant/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ql {
namespace {

// log(k) for the integers the entropy search takes logs of (histogram counts): a table for small ones.
class LogCount {
public:
    static constexpr int kTable = 1 << 16;
    LogCount()
        : m_table(table().data()) {}
    double operator()(double k) const {
        return k < kTable ? m_table[static_cast<std::size_t>(k)] : std::log(k);
    }
    /// The table alone, for callers whose counts are all below kTable (no call on the hot path).
    auto small() const {
        return [t = m_table](auto k) { return t[static_cast<std::size_t>(k)]; };
    }

private:
    static const std::vector<double>& table() {
        static const std::vector<double> t = [] {
            std::vector<double> v(kTable);
            for (int i = 1; i < kTable; ++i)
                v[static_cast<std::size_t>(i)] = std::log(static_cast<double>(i));
            return v;
        }();
        return t;
    }
    const double* m_table;
};

// The entropy search's sum over the levels of threshold i: for each level's bins below the last,
// sum of h*log(h) minus their count times log(H / ne) of the level (see entropySearch). Counts `c`
// as doubles, or as integers when every count has its log in the table (the same values, so the
// same sum, without a conversion each way per level).
template <typename Count, typename Log>
double levelSum(const Count* c, const double* a, const int* z, int levels, int shift, int i, Log lg) {
    const auto last = static_cast<std::size_t>(i - 1);
    double sum = 0.0;
    std::size_t b = 0;
    for (int l = 0; l < levels; ++l) {
        const std::int64_t m = (static_cast<std::int64_t>(l) + 1) * i;
        const auto e = static_cast<std::size_t>(shift >= 0 ? m >> shift : m / levels);
        const std::size_t ex = std::min(e, last);
        const double hx = ex > b ? static_cast<double>(c[ex] - c[b]) : 0.0;
        if (hx > 0.0) sum += (a[ex] - a[b]) - hx * (lg(c[e] - c[b]) - lg(z[e] - z[b]));
        b = e;
    }
    return sum;
}

struct FloatGrid {
    int mantissaBits;
    int minExponent; // of the smallest normal: subnormals share its spacing
};

FloatGrid gridOf(MiniFloat f) {
    switch (f) {
    case MiniFloat::E4M3FN:
        return {3, -6};
    case MiniFloat::E5M2:
        return {2, -14};
    case MiniFloat::E2M1:
        return {1, 0};
    }
    return {3, -6};
}

} // namespace

StepRule::StepRule(const ResolvedSpec& plan)
    : m_float(isFloatTarget(plan.codeTarget))
    , m_symmetric(plan.spec.symmetric)
    , m_qmin(static_cast<double>(plan.qmin()))
    , m_qmax(static_cast<double>(plan.qmax()))
    , m_top(m_float ? static_cast<double>(maxFinite(miniFloatOf(plan.codeTarget))) : m_qmax) {}

GroupClip percentileRange(std::vector<float>& values, double percentile, bool symmetric) {
    GroupClip out;
    if (values.empty()) return out;
    const auto at = [&](double p) {
        const auto k = static_cast<std::size_t>(percentileRank(static_cast<std::int64_t>(values.size()), p));
        std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
        return static_cast<double>(values[k]);
    };
    if (symmetric) {
        for (auto& v : values)
            v = std::fabs(v);
        const double a = at(percentile);
        out.range = {-a, a};
        out.clipped = std::count_if(values.begin(), values.end(), [&](float v) { return v > a; });
        return out;
    }
    const double lo = at(100.0 - percentile), hi = at(percentile);
    out.range = {lo, hi};
    // Below lo plus above hi (a percentile under 50 crosses them: then at most every value).
    out.clipped = std::min<std::int64_t>(
        static_cast<std::int64_t>(values.size()),
        std::count_if(values.begin(), values.end(), [&](float v) { return v < lo; }) +
            std::count_if(values.begin(), values.end(), [&](float v) { return v > hi; }));
    return out;
}

namespace {

// The span MSE searches: the group's range, made symmetric about 0 when the plan is.
ClipRange mseSpan(const GroupRange& g, bool symmetric) {
    double lo = g.lo, hi = g.hi;
    if (symmetric) {
        hi = std::max(-lo, hi);
        lo = -hi;
    }
    return {lo, hi};
}

} // namespace

HistogramGeometry mseGeometry(const GroupRange& g, bool symmetric) {
    const auto [lo, hi] = mseSpan(g, symmetric);
    if (!(hi > lo)) return {};
    const int bins = static_cast<int>(
        std::clamp<std::uint64_t>(std::bit_floor(static_cast<std::uint64_t>(g.finite / 16)), 64, 2048));
    return {static_cast<float>(lo), static_cast<float>(bins / (hi - lo)), bins};
}

GroupClip mseSearch(const GroupRange& g, std::span<const std::uint32_t> hist, const ResolvedSpec& plan) {
    const HistogramGeometry geo = mseGeometry(g, plan.spec.symmetric);
    GroupClip best;
    if (geo.bins == 0) return best; // all zero: every candidate is the zero range
    const int bins = geo.bins;
    const auto [lo, hi] = mseSpan(g, plan.spec.symmetric);
    const double width = (hi - lo) / bins;
    // Prefix sums over bins (counts exact as integers; moments summed in bin order). Thread-local
    // stores, reached through plain pointers taken once: the candidate loop makes no call, and never
    // reads a vector's address again (it did after every call, and in the Python module each such
    // read of a thread_local is a call itself).
    thread_local std::vector<double> centreStore, m1Store, m2Store;
    thread_local std::vector<std::int64_t> n0Store;
    const auto nb = static_cast<std::size_t>(bins);
    centreStore.resize(nb);
    n0Store.resize(nb + 1);
    m1Store.resize(nb + 1);
    m2Store.resize(nb + 1);
    const std::span<const double> centreOf(centreStore);
    double *const centre = centreStore.data(), *const m1 = m1Store.data(), *const m2 = m2Store.data();
    std::int64_t* const n0 = n0Store.data();
    n0[0] = 0;
    m1[0] = m2[0] = 0.0;
    // (The running sums in locals: through the arrays, each step waited on the store before it.)
    std::int64_t runN = 0;
    double run1 = 0.0, run2 = 0.0;
    for (int b = 0; b < bins; ++b) {
        const auto k = static_cast<std::size_t>(b);
        const double c = lo + (b + 0.5) * width, h = hist[k];
        centre[k] = c;
        n0[k + 1] = runN += hist[k];
        m1[k + 1] = run1 += h * c;
        m2[k + 1] = run2 += h * c * c;
    }
    const bool floatTarget = isFloatTarget(plan.codeTarget);
    const StepRule stepOf(plan);
    const Rounding r = plan.convention.rounding;
    const double noiseShare =
        (r == Rounding::HalfToEven || r == Rounding::HalfAwayFromZero) ? 1.0 / 12.0 : 1.0 / 3.0;
    const FloatGrid grid = floatTarget ? gridOf(miniFloatOf(plan.codeTarget)) : FloatGrid{0, 0};
    double bestErr = std::numeric_limits<double>::infinity();
    std::size_t jl = 0, jr = nb; // the widest candidate's bounds: each next one starts there
    for (int k = 100; k >= 20; --k) {
        const ClipRange range{lo * k / 100.0, hi * k / 100.0};
        const StepAndZero sz = stepOf(range);
        const double step = sz.step;
        const auto [left, right] = stepOf.span(sz); // the representable values' span
        jl = lowerBoundFrom(centreOf, jl, left);
        jr = upperBoundFrom(centreOf, jr, right);
        const double low =
            std::max(0.0, left * left * static_cast<double>(n0[jl]) - 2.0 * left * m1[jl] + m2[jl]);
        const double high = std::max(0.0, (m2[nb] - m2[jr]) - 2.0 * right * (m1[nb] - m1[jr]) +
                                              right * right * static_cast<double>(n0[nb] - n0[jr]));
        double noise = 0.0;
        if (!floatTarget) {
            noise = static_cast<double>(n0[jr] - n0[jl]) * step * step * noiseShare;
        } else {
            for (std::size_t b = jl; b < jr; ++b) {
                const double t = std::fabs(centre[b]) / step;
                if (hist[b] == 0 || t == 0.0) continue;
                int e;
                std::frexp(t, &e);
                const double ulp = std::ldexp(step, std::max(e - 1, grid.minExponent) - grid.mantissaBits);
                noise += hist[b] * ulp * ulp * noiseShare;
            }
        }
        const double err = low + high + noise;
        if (err < bestErr) {
            bestErr = err;
            best.range = range;
            best.clipped = n0[jl] + (n0[nb] - n0[jr]);
        }
    }
    return best;
}

int entropyLevels(const ResolvedSpec& plan) {
    return isFloatTarget(plan.codeTarget)
               ? 128
               : static_cast<int>(std::min<std::int64_t>(plan.qmax(), 1 << 30)) + 1;
}

HistogramGeometry entropyGeometry(const GroupRange& g, int levels) {
    const double amax = g.absMax();
    if (!(amax > 0.0)) return {};
    const auto bins = static_cast<int>(
        std::min<std::uint64_t>(2048, std::bit_floor(static_cast<std::uint64_t>(g.finite / 16))));
    if (bins / 2 < levels) return {}; // (bins < 2 · levels, without 2 · levels overflowing for int32)
    return {0.0f, static_cast<float>(bins / amax), bins};
}

GroupClip entropySearch(const GroupRange& g, std::span<const std::uint32_t> hist, int levels) {
    GroupClip out;
    const double amax = g.absMax();
    if (!(amax > 0.0)) return out;
    const int bins = static_cast<int>(hist.size());
    if (bins / 2 < levels) { // too few values for a histogram: absmax (see entropyGeometry)
        out.range = {-amax, amax};
        out.fellBack = true;
        return out;
    }
    // Prefix sums: C counts, Z non-empty bins, A sum of h*log(h), all in bin order.
    const auto nb = static_cast<std::size_t>(bins);
    const LogCount logCount;
    thread_local std::vector<double> c, a;
    thread_local std::vector<int> z;
    thread_local std::vector<std::uint32_t> whole; // C as integers, while its logs are in the table
    c.assign(nb + 1, 0.0);
    a.assign(nb + 1, 0.0);
    z.assign(nb + 1, 0);
    whole.assign(nb + 1, 0u);
    // (The running sums in locals: through the vectors, each step waited on the store before it.)
    double runC = 0.0, runA = 0.0;
    int runZ = 0;
    std::uint32_t runWhole = 0;
    for (std::size_t j = 0; j < nb; ++j) {
        const double h = hist[j];
        c[j + 1] = runC += h;
        z[j + 1] = runZ += hist[j] > 0;
        a[j + 1] = runA += hist[j] > 0 ? h * logCount(h) : 0.0;
        whole[j + 1] = runWhole += hist[j];
    }
    const double n = c[nb], logN = std::log(n);
    const int shift = std::has_single_bit(static_cast<unsigned>(levels))
                          ? std::countr_zero(static_cast<unsigned>(levels))
                          : -1;
    const auto levelEnd = [&](std::int64_t l, int i) {
        const std::int64_t m = (l + 1) * i;
        return static_cast<std::size_t>(shift >= 0 ? m >> shift : m / levels);
    };
    int bestI = bins;
    double bestKl = std::numeric_limits<double>::infinity();
    const bool smallCounts = n < LogCount::kTable;
    const auto consider = [&](int i) {
        const auto last = static_cast<std::size_t>(i - 1);
        // Bins below the last: each non-empty one holds p_j = h_j and q_j = H_l / ne_l of its level,
        // so their KL terms sum per level from the prefix sums.
        const double sum =
            smallCounts ? levelSum(whole.data(), a.data(), z.data(), levels, shift, i, logCount.small())
                        : levelSum(c.data(), a.data(), z.data(), levels, shift, i, logCount);
        double kl = 0.0;
        if (c[last] > 0.0) kl = (sum - c[last] * (logN - std::log(c[static_cast<std::size_t>(i)]))) / n;
        // The last bin also holds every outlier; Q sees only its own count.
        const double p = hist[last] + (n - c[static_cast<std::size_t>(i)]);
        if (p > 0.0) {
            const double pn = p / n;
            double qn = 1e-12;
            if (hist[last] > 0) {
                const std::size_t lb = levelEnd(levels - 2, i);
                const auto li = static_cast<std::size_t>(i);
                qn = (c[li] - c[lb]) / (z[li] - z[lb]) / c[li];
            }
            kl += pn * std::log(pn / qn);
        }
        if (kl < bestKl) {
            bestKl = kl;
            bestI = i;
        }
    };
    // Every threshold costs O(levels). Groups whose search would cost more than n / 4 of those steps
    // (small channels) take every stride-th threshold (pytorch-quantization's `stride`), then halve
    // the stride around the best so far down to one bin. Large groups search them all, as TensorRT.
    int stride = 1;
    while (static_cast<double>((bins - levels) / stride + 1) * levels > std::max(n / 4, 1.0))
        stride *= 2;
    for (int i = levels; i <= bins; i += stride)
        consider(i);
    for (int step = stride / 2; step >= 1; step /= 2) {
        const int centre = bestI;
        if (centre - step >= levels) consider(centre - step);
        if (centre + step <= bins) consider(centre + step);
    }
    const double threshold = std::min(amax, (bestI + 0.5) * (amax / bins));
    out.range = {-threshold, threshold};
    out.clipped = static_cast<std::int64_t>(n - c[std::min(nb, static_cast<std::size_t>(bestI) + 1)]);
    return out;
}

std::uint8_t mxScaleCode(float absMax, bool nan, int emax) {
    if (nan) return 0xFF;
    const int biased = static_cast<int>((std::bit_cast<std::uint32_t>(absMax) >> 23) & 0xFF);
    return static_cast<std::uint8_t>(std::clamp(biased - emax, 0, 254));
}

std::uint8_t nvfp4ScaleCode(float blockAmax, float tensorScale) {
    if (!(tensorScale > 0.0f)) return 0;
    const float sb = blockAmax / 6.0f;
    return encodeMiniFloat(sb / tensorScale, MiniFloat::E4M3FN, Overflow::Saturate);
}

float blockScale(const ResolvedSpec& plan, std::uint8_t code, float tensorScale) {
    if (plan.spec.preset == Preset::MX) return decodeE8M0(code);
    return decodeMiniFloat(code, MiniFloat::E4M3FN) * tensorScale;
}

MiniFloatCodec::MiniFloatCodec(MiniFloat fmt, Overflow overflow)
    : m_fmt(fmt)
    , m_overflow(overflow) {
    const FloatGrid g = gridOf(fmt);
    m_mantBits = g.mantissaBits;
    m_bias = 1 - g.minExponent;
    const int expBits = fmt == MiniFloat::E4M3FN ? 4 : (fmt == MiniFloat::E5M2 ? 5 : 2);
    m_signBit = static_cast<std::uint8_t>(1u << (expBits + m_mantBits));
    m_shift = static_cast<std::uint32_t>(23 - m_mantBits);
    m_half = 1u << (m_shift - 1);
    m_lowMask = (1u << m_shift) - 1u;
    m_mantMask = (1u << m_mantBits) - 1u;
    m_minNormal = floatBits(std::ldexp(1.0f, g.minExponent));
    m_maxFinite = floatBits(maxFinite(fmt));
    m_subScale = std::ldexp(1.0f, m_mantBits - g.minExponent);
    m_overflowCode = encodeMiniFloat(1e30f, fmt, overflow); // a finite value past the largest
    for (int c = 0; c < 256; ++c)
        m_table[c] = decodeMiniFloat(static_cast<std::uint8_t>(c), fmt);
}

std::uint8_t MiniFloatCodec::encodeSlow(float x) const {
    return encodeMiniFloat(x, m_fmt, m_overflow);
}

std::uint8_t mseBlockCode(std::span<const float> finiteValues, std::uint8_t ruleCode, float tensorScale,
                          const ResolvedSpec& plan, const MiniFloatCodec* codec) {
    const bool mx = plan.spec.preset == Preset::MX;
    if (finiteValues.empty() || (mx && ruleCode == 0xFF) || (!mx && !(tensorScale > 0.0f))) return ruleCode;
    // Candidates in the order ties are decided: the rule's code, then its neighbours upwards.
    constexpr int kMax = 5;
    const int reach = mx ? 1 : 2, top = mx ? 254 : 126; // E4M3FN 0x7F is NaN
    int codes[kMax], count = 0;
    codes[count++] = ruleCode;
    for (int code = std::max(0, ruleCode - reach); code <= std::min(top, ruleCode + reach); ++code)
        if (code != ruleCode) codes[count++] = code;
    float scale[kMax];
    for (int k = 0; k < count; ++k)
        scale[k] = blockScale(plan, static_cast<std::uint8_t>(codes[k]), tensorScale);
    double err[kMax] = {};
    if (codec) { // quantizeValue / dequantizeValue for a divide convention, step for step
        bool zero[kMax];
        for (int k = 0; k < count; ++k)
            zero[k] = plan.convention.zeroScaleGivesZero && scale[k] == 0.0f;
        for (float v : finiteValues)
            for (int k = 0; k < count; ++k) { // each candidate's sum still runs in element order
                const std::uint8_t q = zero[k] ? 0 : codec->encode(v / scale[k]);
                const double d = static_cast<double>(v) - codec->decode(q) * scale[k];
                err[k] += d * d;
            }
    } else {
        for (int k = 0; k < count; ++k)
            for (float v : finiteValues) {
                const float back =
                    dequantizeValue(quantizeValue(v, scale[k], 0.0f, plan), scale[k], 0.0f, plan);
                const double d = static_cast<double>(v) - back;
                err[k] += d * d;
            }
    }
    int best = 0;
    for (int k = 1; k < count; ++k)
        if (err[k] < err[best]) best = k;
    return static_cast<std::uint8_t>(codes[best]);
}

void checkCalibrationRequest(const ResolvedSpec& plan) {
    if (isBlockFormat(plan.spec.preset)) return; // resolveSpec checked
    const Calibration& cal = plan.spec.calibration;
    const bool symmetric = plan.spec.symmetric;
    if (cal.method == CalibMethod::Explicit)
        throw QuantError("explicit calibration: scales (and zero points) come from the caller, not the data");
    if (cal.method == CalibMethod::MinMax && symmetric)
        throw QuantError(
            "min-max calibration gives an asymmetric range: use --asymmetric (or --calib absmax)");
    if (cal.method == CalibMethod::Entropy && !symmetric)
        throw QuantError("entropy calibration finds a symmetric threshold: use --symmetric");
    if (!symmetric && plan.scalarZeroPoint)
        throw QuantError(std::string(nameOf(plan.spec.preset)) +
                         " takes one scalar offset for all groups: supply it with --zero-point");
    if (cal.method == CalibMethod::Percentile && !(cal.percentile > 0.0 && cal.percentile <= 100.0))
        throw QuantError("percentile must be in (0, 100]");
}

QuantParams paramsFromClips(const ResolvedSpec& plan, const std::vector<GroupClip>& clips,
                            const std::vector<GroupRange>& ranges) {
    QuantParams p;
    p.scales.reserve(clips.size());
    const StepRule stepOf(plan);
    for (const auto& c : clips) {
        const auto [step, zp] = stepOf(c.range);
        p.scales.push_back(operatorScaleFromStep(step, plan.convention));
        if (!plan.spec.symmetric) p.zeroPoints.push_back(zp);
    }
    p.calibrationNote = calibrationNote(plan, clips, ranges);
    return p;
}

std::string calibrationNote(const ResolvedSpec& plan, const std::vector<GroupClip>& clips,
                            const std::vector<GroupRange>& ranges) {
    std::int64_t finite = 0, clipped = 0, heavy = 0, fellBack = 0,
                 smallest = std::numeric_limits<std::int64_t>::max();
    for (std::size_t g = 0; g < clips.size(); ++g) {
        finite += ranges[g].finite;
        clipped += clips[g].clipped;
        heavy += ranges[g].finite > 0 && 4 * clips[g].clipped > ranges[g].finite;
        if (clips[g].fellBack) {
            ++fellBack;
            smallest = std::min(smallest, ranges[g].finite);
        }
    }
    const std::string method(nameOf(plan.spec.calibration.method));
    std::string note;
    char buf[400];
    if (finite > 0 && (50 * clipped > finite || heavy > 0)) {
        std::snprintf(buf, sizeof buf,
                      "%s calibration clips %.1f%% of the values, where absmax clips none; %lld of %zu scale "
                      "groups lose more than a quarter of theirs. Expect a much larger error than absmax: "
                      "--calib absmax or mse keeps the range.",
                      method.c_str(), 100.0 * static_cast<double>(clipped) / static_cast<double>(finite),
                      static_cast<long long>(heavy), clips.size());
        note = buf;
    }
    if (fellBack > 0) {
        std::snprintf(
            buf, sizeof buf,
            "%s calibration needs at least %lld values per scale group for %s; %lld of %zu groups have "
            "fewer (smallest %lld) and use their absmax range instead.",
            method.c_str(), 32LL * entropyLevels(plan), std::string(nameOf(plan.codeTarget)).c_str(),
            static_cast<long long>(fellBack), clips.size(), static_cast<long long>(smallest));
        note += note.empty() ? std::string(buf) : " " + std::string(buf);
    }
    return note;
}

} // namespace ql
