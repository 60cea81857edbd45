#include "analysis/weighted_error.h"

#include "base/error.h"

#include <limits>

namespace ql {

double WeightedError::sqnrDb() const {
    if (count == 0) return NAN;
    if (sumWeightedSqError == 0) return std::numeric_limits<double>::infinity();
    if (sumWeightedSqX == 0) return -std::numeric_limits<double>::infinity();
    return 10.0 * std::log10(sumWeightedSqX / sumWeightedSqError);
}

WeightedError weightedError(std::span<const float> x, std::span<const float> xhat, std::span<const float> s,
                            std::int64_t channels, int matrices, std::int64_t inner) {
    const auto n = static_cast<std::int64_t>(x.size());
    if (xhat.size() != x.size()) throw QuantError("weighted error: x and x̂ differ in size");
    if (channels <= 0 || matrices <= 0 || inner <= 0 ||
        static_cast<std::int64_t>(s.size()) != channels * matrices || n % (channels * matrices * inner) != 0)
        throw QuantError("weighted error: " + std::to_string(s.size()) + " importance values do not fit " +
                         std::to_string(n) + " elements in " + std::to_string(matrices) + " matrices of " +
                         std::to_string(channels) + " input channels of " + std::to_string(inner) +
                         " elements each");
    const std::int64_t perMatrix = n / matrices;
    const std::int64_t block = channels * inner; // one step of every axis before the channel axis
    WeightedError w;
    for (std::int64_t m = 0; m < matrices; ++m) {
        const float* sm = s.data() + m * channels;
        for (std::int64_t start = m * perMatrix; start < (m + 1) * perMatrix; start += block) {
            double err = 0, sig = 0;
            std::int64_t finite = 0;
            for (std::int64_t j = 0; j < channels; ++j) {
                const double sj = static_cast<double>(sm[j]);
                for (std::int64_t k = start + j * inner; k < start + (j + 1) * inner; ++k) {
                    const float a = x[static_cast<std::size_t>(k)], b = xhat[static_cast<std::size_t>(k)];
                    if (!std::isfinite(a) || !std::isfinite(b)) continue;
                    const double d = static_cast<double>(a) - static_cast<double>(b);
                    err += sj * d * d;
                    sig += sj * static_cast<double>(a) * static_cast<double>(a);
                    ++finite;
                }
            }
            w.sumWeightedSqError += err;
            w.sumWeightedSqX += sig;
            w.count += finite;
        }
    }
    return w;
}

} // namespace ql
