#pragma once
// Helpers shared by the conformance suites (backends, the fast analysis): the grid of specs and
// shapes, specs that calibrate, test values with every special, and tensors in each input dtype.
#include "quant/resolved_spec.h"
#include "quant_test_util.h"
#include "tensor/float_formats.h"
#include "tensor/tensor.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace qltest {

/// A spec that calibrates from the data: absmax when symmetric, min-max otherwise.
inline ql::QuantSpec calibratedSpec(ql::Preset p, ql::Target t, ql::Scheme s, std::vector<int> axes,
                                    bool symmetric = true) {
    ql::QuantSpec q = spec(p, t, s, std::move(axes), symmetric);
    q.calibration.method = symmetric ? ql::CalibMethod::AbsMax : ql::CalibMethod::MinMax;
    return q;
}

/// Normal values with exact binary fractions (ties once divided by a power of two) and every
/// special, one every five elements from index 3.
inline std::vector<float> conformanceValues(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 2.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = i % 2 ? d(rng) : std::round(d(rng) * 32.0f) / 32.0f;
    constexpr float inf = std::numeric_limits<float>::infinity();
    const float specials[] = {
        std::numeric_limits<float>::quiet_NaN(),
        // -NaN as x86 makes it: a GPU's arithmetic gives +NaN, and FP8 codes keep the sign.
        ql::floatFromBits(0xFFC00000u), inf, -inf, -0.0f, 1e30f, -1e30f, 3e-39f, 1e-8f,
        // Around 2^22 and 2^63 once scaled: where rounding tricks and torch's
        // int64 cast could part from the reference.
        524287.5f, 1048576.5f, -2097151.0f, 0x1p60f, -0x1p60f, 0x1.fffffep59f, 0x1p63f, 0x1.fffffep62f,
        -0x1p63f};
    for (std::size_t k = 0; k < std::size(specials) && 5 * k + 3 < v.size(); ++k)
        v[5 * k + 3] = specials[k];
    return v;
}

/// `v` as a tensor of `dtype` (F32, BF16 or F16; the 16-bit ones rounded to nearest even).
inline ql::Tensor tensorOf(const std::vector<float>& v, const ql::Shape& shape, ql::DType dtype) {
    if (dtype == ql::DType::F32) return ql::Tensor::fromFloats(shape, v);
    ql::Tensor t(dtype, shape);
    auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
    for (std::size_t i = 0; i < v.size(); ++i)
        p[i] = dtype == ql::DType::BF16 ? ql::floatToBf16(v[i]) : ql::floatToHalf(v[i]);
    return t;
}

/// One named spec of the conformance grid.
struct SpecRow {
    const char* name;
    ql::QuantSpec spec;
};

inline std::vector<SpecRow> conformanceSpecs() {
    std::vector<SpecRow> rows;
    auto add = [&](const char* n, ql::QuantSpec s) { rows.push_back({n, std::move(s)}); };
    using namespace ql;
    using P = Preset;
    using T = Target;
    using S = Scheme;
    add("torch/per-tensor/int8", calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}));
    add("torch/per-tensor/uint8-asym", calibratedSpec(P::Torch, T::UInt8, S::PerTensor, {}, false));
    add("torch/per-channel0/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0}));
    add("torch/per-channel-last/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {-1}));
    add("torch/per-channel0/uint8-asym", calibratedSpec(P::Torch, T::UInt8, S::PerChannel, {0}, false));
    add("torch/per-channel0/uint4-asym", calibratedSpec(P::Torch, T::UInt4, S::PerChannel, {0}, false));
    add("torch/per-channel0/int32", calibratedSpec(P::Torch, T::Int32, S::PerChannel, {0}));
    add("tensorrt/per-tensor/int8", calibratedSpec(P::TensorRT, T::Int8, S::PerTensor, {}));
    add("tensorrt/per-tensor/fp8", calibratedSpec(P::TensorRT, T::Fp8E4M3, S::PerTensor, {}));
    add("tensorrt/per-channel0/fp8", calibratedSpec(P::TensorRT, T::Fp8E4M3, S::PerChannel, {0}));
    add("tensorrt/per-channel-last/fp4", calibratedSpec(P::TensorRT, T::Fp4E2M1, S::PerChannel, {-1}));
    QuantSpec blk = calibratedSpec(P::TensorRT, T::Int4, S::Block, {});
    blk.block = {1, 16};
    add("tensorrt/block-1x16/int4", blk);
    blk.block = {4, 16};
    add("tensorrt/block-4x16/int4", blk);
    add("aclnn-quantize/per-channel0/int8", calibratedSpec(P::AclnnQuantize, T::Int8, S::PerChannel, {0}));
    add("aclnn-quantize/per-tensor/uint8-asym",
        calibratedSpec(P::AclnnQuantize, T::UInt8, S::PerTensor, {}, false));
    add("aclnn-quantize/per-channel-last/fp8-e5m2",
        calibratedSpec(P::AclnnQuantize, T::Fp8E5M2, S::PerChannel, {-1}));
    add("ascend-quant/per-tensor/int8", calibratedSpec(P::AscendQuant, T::Int8, S::PerTensor, {}));
    add("ascend-quant/per-channel-last/int8-asym",
        calibratedSpec(P::AscendQuant, T::Int8, S::PerChannel, {-1}, false));
    for (Rounding r : {Rounding::Floor, Rounding::Ceil, Rounding::Trunc}) {
        QuantSpec s = calibratedSpec(P::AscendQuant, T::Int8, S::PerChannel, {-1});
        s.rounding = r;
        rows.push_back({r == Rounding::Floor  ? "ascend-quant/floor"
                        : r == Rounding::Ceil ? "ascend-quant/ceil"
                                              : "ascend-quant/trunc",
                        s});
    }
    QuantSpec sq = calibratedSpec(P::AscendQuant, T::Int8, S::PerTensor, {});
    sq.sqrtMode = true;
    add("ascend-quant/sqrt-mode/int8", sq);
    add("ascend-quant/per-tensor/fp8-e5m2", calibratedSpec(P::AscendQuant, T::Fp8E5M2, S::PerTensor, {}));
    QuantSpec pg = calibratedSpec(P::Custom, T::Int4, S::PerGroup, {-1});
    pg.groupSize = 32;
    Convention away;
    away.scaleOp = ScaleOp::Divide;
    away.zeroPoint = ZeroPointStage::BeforeRounding;
    away.rounding = Rounding::HalfAwayFromZero;
    pg.custom = away;
    add("custom/per-group-g32/int4-half-away", pg);
    QuantSpec pt = calibratedSpec(P::PyPTO, T::Int8, S::PerChannel, {0});
    add("pypto/int8", pt);
    add("mx/fp8-e4m3", calibratedSpec(P::MX, T::Fp8E4M3, S::Block, {}));
    add("mx/fp4", calibratedSpec(P::MX, T::Fp4E2M1, S::Block, {}));
    // Blocks down the columns: rows do not own their blocks, so the ranges are merged across workers.
    add("mx/fp4/axis0", calibratedSpec(P::MX, T::Fp4E2M1, S::Block, {0}));
    add("nvfp4/fp4", calibratedSpec(P::NVFP4, T::Fp4E2M1, S::Block, {}));
    return rows;
}

inline const std::vector<ql::Shape>& conformanceShapes() {
    static const std::vector<ql::Shape> s{{64, 256}, {33, 129}, {7, 17}, {3, 5, 64},
                                          {1, 1031}, {128, 32}, {1000}};
    return s;
}

} // namespace qltest
