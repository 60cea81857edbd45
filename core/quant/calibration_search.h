#pragma once
// What a calibration method decides for one scale group, written once and shared by the scalar
// oracle (calibration.cpp) and the fast path (calibration_fast.cpp): the two differ only in how
// they read the data (counts, min / max, k-th values), never in the arithmetic that follows, so
// their answers agree bit for bit whatever the thread count.
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ql {

/// A clip range [lo, hi] (lo <= 0 <= hi for asymmetric; lo = -hi for symmetric).
using ClipRange = std::pair<double, double>;

/// A group's finite range as absmax / min-max read it: min and max start at 0, Inf never widens
/// it, NaN is only flagged. Merging is exact (min, max, sums of counts).
struct GroupRange {
    float lo = 0.0f;
    float hi = 0.0f;
    bool nan = false;
    std::int64_t finite = 0;

    void add(float v) {
        if (std::isnan(v)) nan = true;
        if (!std::isfinite(v)) return;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        ++finite;
    }
    void merge(const GroupRange& o) {
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
        nan = nan || o.nan;
        finite += o.finite;
    }
    float absMax() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

/// A method's answer for one group, with what the note needs: how many values fall outside it.
struct GroupClip {
    ClipRange range{0.0, 0.0};
    std::int64_t clipped = 0; // exact for percentile; counted on the histogram for MSE / entropy
    bool fellBack = false;    // entropy on a group too small for its histogram: absmax instead
};

// ---- percentile: exact k-th value ------------------------------------------------------------

/// The oracle's rank rule: k = round(p / 100 * (n - 1)), 0-based from the smallest (nth_element).
inline std::int64_t percentileRank(std::int64_t n, double percentile) {
    return std::llround(percentile / 100.0 * static_cast<double>(n - 1));
}
/// The values of selection keys, whose unsigned order is the order of |v| (magnitude keys: the
/// bits shifted left by one) or of v (ordered keys: negatives inverted, positives' sign bit set).
inline float fromMagnitudeKey(std::uint32_t k) {
    return std::bit_cast<float>(k >> 1);
}
inline float fromOrderedKey(std::uint32_t k) {
    return std::bit_cast<float>((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
}

/// The oracle: nth_element on the group's finite values (reordered in place).
GroupClip percentileRange(std::vector<float>& values, double percentile, bool symmetric);

// ---- histogram searches (MSE, entropy) -------------------------------------------------------

/// Bins over [origin, origin + bins / factor): bin = int((v - origin) * factor), in float arithmetic
/// (so four lanes compute it as one scalar does), the top bin also holding anything at or past the
/// end. bins == 0 means no histogram (a zero range, or a group too small for the method).
struct HistogramGeometry {
    float origin = 0.0f;
    float factor = 0.0f;
    int bins = 0;
    int binOf(float v) const {
        const float t = (v - origin) * factor; // >= 0 for v >= origin; +Inf when the span overflows
        return t < static_cast<float>(bins) ? static_cast<int>(t) : bins - 1;
    }
};

/// std::lower_bound and std::upper_bound on sorted `v`, walked from a previous answer `j` (any j in
/// [0, v.size()] gives the same index): MSE's candidates move their bounds a bin or two from one clip
/// ratio to the next, a step or two where a binary search takes eight unpredictable branches.
inline std::size_t lowerBoundFrom(std::span<const double> v, std::size_t j, double x) {
    while (j < v.size() && v[j] < x)
        ++j;
    while (j > 0 && !(v[j - 1] < x))
        --j;
    return j;
}
inline std::size_t upperBoundFrom(std::span<const double> v, std::size_t j, double x) {
    while (j < v.size() && !(x < v[j]))
        ++j;
    while (j > 0 && x < v[j - 1])
        --j;
    return j;
}

/// MSE histograms count v (not |v|) so that floor / ceil rounding and zero points are seen.
HistogramGeometry mseGeometry(const GroupRange& g, bool symmetric);
/// Clip ratios 1.00, 0.99, ... 0.20 of the group's range, each scored on the histogram as in
/// ACIQ (Banner et al. 2019): values the candidate's representable range clips cost their squared
/// distance to it (bin centres), the others the rounding noise of its step (step^2/12 for
/// round-to-nearest, step^2/3 for floor / ceil / trunc; relative to the value for float targets).
/// The first (widest) candidate wins ties.
GroupClip mseSearch(const GroupRange& g, std::span<const std::uint32_t> hist, const ResolvedSpec& plan);

/// Quantized levels of the plan's target that entropy calibration merges into (TensorRT: 128).
int entropyLevels(const ResolvedSpec& plan);
/// |v| histograms over [0, amax]: the largest power of two <= n / 16 bins, at most TensorRT's 2048.
/// A group needs at least 2 * levels bins (4096 values for int8, 256 for int4); smaller groups get
/// bins == 0 and absmax, since a KL search over near-empty bins only measures sampling noise.
HistogramGeometry entropyGeometry(const GroupRange& g, int levels);
/// TensorRT's legacy entropy search: thresholds from `levels` bins to all of them; for each, P is
/// the histogram below it with the outliers folded into its last bin, Q the same bins merged into
/// `levels` and spread back over the non-empty ones; the least KL(P||Q) wins (first on ties).
/// Prefix sums make each candidate O(levels), so the cost does not grow with the group; a group
/// whose full search would cost more than n / 4 level steps searches every stride-th threshold,
/// then halves the stride around the best (so a 4096-value channel costs ~15 thresholds, not 129).
GroupClip entropySearch(const GroupRange& g, std::span<const std::uint32_t> hist, int levels);

// ---- block formats ----------------------------------------------------------------------------

/// OCP MX floor rule (spec §6.3): E8M0 code = biased exponent of amax - emax_elem, in [0, 254];
/// a block holding a NaN gets 0xFF.
std::uint8_t mxScaleCode(float absMax, bool nan, int emax);
/// NVFP4 (spec §6.4): S_b = e4m3(amax_b / 6 / s_g); 0 when s_g is 0.
std::uint8_t nvfp4ScaleCode(float blockAmax, float tensorScale);
/// NVFP4 s_g = amax / (448 * 6).
inline float nvfp4TensorScale(float amax) {
    return amax / (448.0f * 6.0f);
}
/// The scale a block code stands for (MX: 2^e; NVFP4: E4M3(code) * s_g).
float blockScale(const ResolvedSpec& plan, std::uint8_t code, float tensorScale);
/// encodeMiniFloat for finite values without its double arithmetic (the float's bits rounded half to
/// even at the format's quantum), and decodeMiniFloat as a table; non-finite values take the library.
class MiniFloatCodec {
public:
    MiniFloatCodec(MiniFloat fmt, Overflow overflow);
    std::uint8_t encode(float x) const {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(x), a = u & 0x7FFFFFFFu;
        if (a >= 0x7F800000u) return encodeSlow(x);
        const std::uint8_t sign = (u >> 31) ? m_signBit : 0;
        if (a < m_minNormal) // the format's subnormals: a multiple of its smallest step, exactly scaled
            return static_cast<std::uint8_t>(
                sign | static_cast<std::uint8_t>(std::nearbyint(std::bit_cast<float>(a) * m_subScale)));
        const std::uint32_t r = (a + m_half - 1u + ((a >> m_shift) & 1u)) & ~m_lowMask;
        if (r > m_maxFinite) return sign | m_overflowCode;
        const std::uint32_t exp = (r >> 23) - 127u + static_cast<std::uint32_t>(m_bias);
        return static_cast<std::uint8_t>(sign | (exp << m_mantBits) | ((r >> m_shift) & m_mantMask));
    }
    float decode(std::uint8_t code) const { return m_table[code]; }

private:
    std::uint8_t encodeSlow(float x) const;
    MiniFloat m_fmt;
    Overflow m_overflow;
    std::uint8_t m_signBit, m_overflowCode;
    int m_mantBits, m_bias;
    std::uint32_t m_shift, m_half, m_lowMask, m_mantMask, m_minNormal, m_maxFinite;
    float m_subScale;
    float m_table[256];
};

/// --calib mse for MX / NVFP4: the block's code and its neighbours (MX: e-1, e, e+1; NVFP4: the
/// E4M3 codes within 2 of the rule's), scored by the block's squared error through the plan's own
/// quantize / dequantize, finite values in element order. The rule's code wins ties.
/// `codec` (the plan's element format; divide conventions only) replaces quantizeValue /
/// dequantizeValue with the same arithmetic; null takes them.
std::uint8_t mseBlockCode(std::span<const float> finiteValues, std::uint8_t ruleCode, float tensorScale,
                          const ResolvedSpec& plan, const MiniFloatCodec* codec = nullptr);

// ---- ranges to parameters ---------------------------------------------------------------------

/// A step below the smallest normal float would round to a zero (or subnormal) scale, which no
/// operator accepts: ranges made of subnormals get the smallest normal step instead.
inline double normalStep(double step) {
    return std::max(step, static_cast<double>(std::numeric_limits<float>::min()));
}

/// The step and zero point for a clip range under the plan's target.
struct StepAndZero {
    double step;
    float zeroPoint;
};
/// stepForRange with the plan's choices made once: a search scores many ranges under one plan.
class StepRule {
public:
    explicit StepRule(const ResolvedSpec& plan);
    StepAndZero operator()(ClipRange range) const {
        if (m_float || m_symmetric) {
            const double amax = std::max(std::fabs(range.first), std::fabs(range.second));
            return {amax > 0 ? normalStep(amax / m_top) : 1.0, 0.0f}; // a zero range never divides by zero
        }
        const double lo = std::min(range.first, 0.0), hi = std::max(range.second, 0.0);
        const double step = hi > lo ? normalStep((hi - lo) / (m_qmax - m_qmin)) : 1.0;
        const double zp = std::clamp(m_qmin - std::nearbyint(lo / step), m_qmin, m_qmax);
        return {step, static_cast<float>(zp)};
    }
    /// The representable values' span for a step and zero point.
    std::pair<double, double> span(StepAndZero s) const {
        if (m_float) return {-m_top * s.step, m_top * s.step};
        return {(m_qmin - s.zeroPoint) * s.step, (m_qmax - s.zeroPoint) * s.step};
    }

private:
    bool m_float, m_symmetric;
    double m_qmin, m_qmax;
    double m_top; // the amax a step is taken for: the float format's largest finite, or qmax
};
inline StepAndZero stepForRange(ClipRange range, const ResolvedSpec& plan) {
    return StepRule(plan)(range);
}

/// Throws QuantError for requests no data can answer (explicit scales, min-max symmetric, ...).
void checkCalibrationRequest(const ResolvedSpec& plan);

/// The last step of every range calibration: one range per group -> scales (and zero points), with
/// calibrationNote set (which reads only each GroupRange's finite count).
QuantParams paramsFromClips(const ResolvedSpec& plan, const std::vector<GroupClip>& clips,
                            const std::vector<GroupRange>& ranges);

/// In words a user understands, when a calibrated range is far worse than absmax on the same groups
/// (it clips more than 2% of all values, or more than a quarter of some group's); empty otherwise.
std::string calibrationNote(const ResolvedSpec& plan, const std::vector<GroupClip>& clips,
                            const std::vector<GroupRange>& ranges);

} // namespace ql
