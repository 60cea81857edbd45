#pragma once
// Helpers shared by the engine's test suites.
#include "base/error.h"
#include "quant/reference.h"

#include <QMetaType>
#include <QTest>
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

Q_DECLARE_METATYPE(ql::QuantSpec)
Q_DECLARE_METATYPE(std::vector<float>)
Q_DECLARE_METATYPE(std::vector<int>)
Q_DECLARE_METATYPE(std::vector<std::int64_t>)

namespace qltest {

inline float bits(std::uint32_t u) {
    return std::bit_cast<float>(u);
}

/// n normal values (mean 0), the same for the same seed.
inline std::vector<float> normalValues(std::int64_t n, unsigned seed, float sigma = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, sigma);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v)
        x = d(rng);
    return v;
}

inline ql::QuantSpec spec(ql::Preset preset, ql::Target target, ql::Scheme scheme, std::vector<int> axes = {},
                          bool symmetric = true) {
    ql::QuantSpec s;
    s.preset = preset;
    s.target = target;
    s.scheme = scheme;
    s.axes = std::move(axes);
    s.symmetric = symmetric;
    s.calibration.method = ql::CalibMethod::Explicit;
    return s;
}

inline std::vector<int> toInts(const ql::Codes& codes) {
    std::vector<int> out;
    for (std::int64_t i = 0; i < codes.size(); ++i)
        out.push_back(codes.at(i));
    return out;
}

/// Quantizes with explicit scales / zero points through the reference and returns the codes.
inline std::vector<int> quantize(const ql::QuantSpec& s, const ql::Shape& shape, const std::vector<float>& x,
                                 const std::vector<float>& scales, const std::vector<float>& zps = {}) {
    const auto plan = ql::resolveSpec(s, shape);
    ql::QuantParams p;
    p.scales = scales;
    p.zeroPoints = zps;
    return toInts(ql::quantizeReference(plan, p, x));
}

} // namespace qltest
