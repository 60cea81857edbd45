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

void checkImportanceFits(const ImportanceWeights& w, std::int64_t n) {
    if (w.channels <= 0 || w.matrices <= 0 || w.inner <= 0 ||
        static_cast<std::int64_t>(w.sqMean.size()) != w.channels * w.matrices ||
        n % (w.channels * w.matrices * w.inner) != 0)
        throw QuantError("weighted error: " + std::to_string(w.sqMean.size()) +
                         " importance values do not fit " + std::to_string(n) + " elements in " +
                         std::to_string(w.matrices) + " matrices of " + std::to_string(w.channels) +
                         " input channels of " + std::to_string(w.inner) + " elements each");
}

WeightedRuns::WeightedRuns(const ImportanceWeights& w, std::int64_t n)
    : m_s(w.sqMean.data())
    , m_channels(w.channels)
    , m_inner(w.inner)
    , m_perMatrix(n / w.matrices) {}

void WeightedRuns::add(const float* x, const float* xh, int len, std::int64_t first, bool finite) {
    // Where element `first` sits: its matrix's weights, its channel and its place in the channel's step.
    const float* s = m_s + (first / m_perMatrix) * m_channels;
    std::int64_t within = first % m_perMatrix;
    std::int64_t channel = (within / m_inner) % m_channels, step = within % m_inner;
    double err = 0, sig = 0;
    std::int64_t counted = 0;
    for (int k = 0; k < len; ++k) {
        const float a = x[k], b = xh[k];
        if (finite || (std::isfinite(a) && std::isfinite(b))) {
            const double sj = static_cast<double>(s[channel]);
            const double d = static_cast<double>(a) - static_cast<double>(b);
            err += sj * d * d;
            sig += sj * static_cast<double>(a) * static_cast<double>(a);
            ++counted;
        }
        if (++step == m_inner) {
            step = 0;
            if (++channel == m_channels) channel = 0;
        }
        if (++within == m_perMatrix) { // the next matrix's weights
            within = 0;
            s += m_channels;
        }
    }
    sums.sumWeightedSqError += err;
    sums.sumWeightedSqX += sig;
    sums.count += counted;
}

WeightedError weightedError(std::span<const float> x, std::span<const float> xhat, std::span<const float> s,
                            std::int64_t channels, int matrices, std::int64_t inner) {
    const auto n = static_cast<std::int64_t>(x.size());
    if (xhat.size() != x.size()) throw QuantError("weighted error: x and x̂ differ in size");
    checkImportanceFits({s, channels, matrices, inner, {}}, n);
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
