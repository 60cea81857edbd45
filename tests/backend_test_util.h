#pragma once
// Helpers shared by the backend conformance suites (cpu, cuda): specs that calibrate, test values
// with every special, and tensors in each input dtype.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "quant/plan.h"
#include "tensor/float_formats.h"
#include "tensor/tensor.h"

#include "quant_test_util.h"

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
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 2 ? d(rng) : std::round(d(rng) * 32.0f) / 32.0f;
    constexpr float inf = std::numeric_limits<float>::infinity();
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                              // -NaN as x86 makes it: a GPU's arithmetic gives +NaN, and FP8 codes keep the sign.
                              ql::floatFromBits(0xFFC00000u), inf, -inf, -0.0f, 1e30f, -1e30f, 3e-39f, 1e-8f,
                              // Around 2^22 and 2^63 once scaled: where rounding tricks and torch's
                              // int64 cast could part from the reference.
                              524287.5f, 1048576.5f, -2097151.0f, 0x1p60f, -0x1p60f, 0x1.fffffep59f, 0x1p63f,
                              0x1.fffffep62f, -0x1p63f};
    for (std::size_t k = 0; k < std::size(specials) && 5 * k + 3 < v.size(); ++k) v[5 * k + 3] = specials[k];
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

} // namespace qltest
