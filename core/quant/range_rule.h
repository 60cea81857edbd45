#pragma once
// Calibrations that need only each group's finite range [min(0, x), max(0, x)], and calibrate's
// last step for them, group by group: range -> step -> operator scale (and zero point), or, for MX
// and NVFP4, range -> block scale code -> scale. Backends that measure ranges with their own kernels
// (the cpu backend's range pass, the cuda backend's range kernel) turn them into parameters here,
// so every backend gives calibrate's answer.
#include "base/mapped_memory.h"
#include "quant/calibration.h"
#include "quant/calibration_search.h"
#include "quant/resolved_spec.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ql {

/// True when `plan`'s calibration is a function of each group's finite range alone: absmax (for
/// symmetric plans or per-group zero points) and asymmetric minmax with per-group zero points.
/// MX / NVFP4 block scales, percentile, MSE and entropy are not.
inline bool rangeCalibrated(const ResolvedSpec& plan) {
    const CalibMethod m = plan.spec.calibration.method;
    if (isBlockFormat(plan.spec.preset)) return false;
    if (m == CalibMethod::AbsMax) return plan.spec.symmetric || !plan.scalarZeroPoint;
    return m == CalibMethod::MinMax && !plan.spec.symmetric && !plan.scalarZeroPoint;
}

/// True when `plan`'s MX / NVFP4 block scales follow from each block's finite range and whether it
/// holds a NaN (every calibration but MSE, which searches a block's neighbouring codes). NVFP4 also
/// needs the tensor's finite absolute maximum first (RangeRule::setTensorAmax).
inline bool blockRangeCalibrated(const ResolvedSpec& plan) {
    return isBlockFormat(plan.spec.preset) && plan.spec.calibration.method != CalibMethod::Mse;
}

/// range -> parameters for one group: the step rule with the plan's constants looked up once
/// (StepRule), since per-group jobs do this once per 128 elements.
class RangeRule {
public:
    explicit RangeRule(const ResolvedSpec& plan)
        : m_plan(plan)
        , m_block(isBlockFormat(plan.spec.preset))
        , m_mx(plan.spec.preset == Preset::MX)
        , m_step(plan)
        , m_emax(m_mx ? maxExponent(miniFloatOf(plan.codeTarget)) : 0) {}

    /// MX or NVFP4: block scales from each block's absolute maximum (applyBlocks).
    bool blocks() const { return m_block; }
    /// Whether apply() needs setTensorAmax() first (NVFP4's tensor scale).
    bool needsTensorAmax() const { return m_block && !m_mx; }
    /// NVFP4: the tensor scale from the finite absolute maximum of the whole tensor.
    void setTensorAmax(float amax, QuantParams& p) const { p.tensorScale = nvfp4TensorScale(amax); }

    /// Writes group g's scale (and zero point when asymmetric; code for MX / NVFP4) into `p`, sized by
    /// emptyParams. `nan`: the group holds a NaN (only MX's rule looks at it).
    void apply(float lo, float hi, std::int64_t g, QuantParams& p, bool nan = false) const {
        if (m_block) {
            const float amax = std::max(std::fabs(lo), std::fabs(hi));
            const float signedAmax = nan ? -amax : amax;
            return applyBlocks(&signedAmax, g, 1, p);
        }
        const auto [step, zp] = m_step(ClipRange(lo, hi));
        p.scales[static_cast<std::size_t>(g)] = operatorScaleFromStep(step, m_plan.convention);
        if (!m_plan.spec.symmetric) p.zeroPoints[static_cast<std::size_t>(g)] = zp;
    }

    /// MX / NVFP4: the codes and scales of blocks first .. first + count - 1 from their finite
    /// absolute maxima, negated where the block holds a NaN (-0 included: the sign bit is the flag), as
    /// calibrateBlocks' rule (mxScaleCode / nvfp4ScaleCode, then blockScale). `amax` may be
    /// p.scales.data() + first: each block's maximum is read before its scale is written.
    void applyBlocks(const float* amax, std::int64_t first, std::int64_t count, QuantParams& p) const {
        std::uint8_t* const codes = p.scaleCodes.data() + first;
        float* const scales = p.scales.data() + first;
        if (m_mx) {
            for (std::int64_t k = 0; k < count; ++k) {
                codes[k] = mxScaleCode(std::fabs(amax[k]), std::signbit(amax[k]), m_emax);
                scales[k] = m_e8m0[codes[k]];
            }
            return;
        }
        const float sg = p.tensorScale;
        if (!(sg > 0.0f)) {
            std::fill(codes, codes + count, std::uint8_t{0});
            std::fill(scales, scales + count, m_e4m3.decode(0) * sg);
            return;
        }
        constexpr std::int64_t kStep = 64; // the two divisions a vector at a time, then the codes
        float unit[kStep];
        for (std::int64_t k0 = 0; k0 < count; k0 += kStep) {
            const std::int64_t n = std::min(kStep, count - k0);
            for (std::int64_t k = 0; k < n; ++k)
                unit[k] = std::fabs(amax[k0 + k]) / 6.0f / sg;
            for (std::int64_t k = 0; k < n; ++k) {
                codes[k0 + k] = m_e4m3.encode(unit[k]);
                scales[k0 + k] = m_e4m3.decode(codes[k0 + k]) * sg;
            }
        }
    }

    /// Parameters sized for every group of the plan (scales 1, zero points 0), ready for apply().
    QuantParams emptyParams() const {
        QuantParams p;
        const auto n = static_cast<std::size_t>(m_plan.scaleCount);
        sized(p.scales, n, 1.0f);
        if (m_block)
            sized(p.scaleCodes, n, std::uint8_t{0});
        else if (!m_plan.spec.symmetric)
            sized(p.zeroPoints, n, 0.0f);
        return p;
    }

private:
    // n copies of v, in huge pages where they fill some (first touched here, by this thread).
    template <typename T> static void sized(std::vector<T>& v, std::size_t n, T value) {
        v.reserve(n);
        mapped::adviseHugePages(v.data(), n * sizeof(T));
        v.assign(n, value);
    }

    const ResolvedSpec& m_plan;
    bool m_block, m_mx;
    StepRule m_step;
    int m_emax;
    MiniFloatCodec m_e4m3{MiniFloat::E4M3FN, Overflow::Saturate}; // NVFP4's block codes
    std::array<float, 256> m_e8m0 = [] {                          // MX's block scales
        std::array<float, 256> t{};
        for (int c = 0; c < 256; ++c)
            t[static_cast<std::size_t>(c)] = decodeE8M0(static_cast<std::uint8_t>(c));
        return t;
    }();
};

} // namespace ql
