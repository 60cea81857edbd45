#pragma once
// Importance-weighted error: the expected error in a linear layer's output, E‖(W − Ŵ)x‖², under the
// diagonal approximation llama.cpp's importance matrices make: Σ_j E[x_j²] Σ_i (W_ij − Ŵ_ij)², with j
// the input channel: the axis the weight's role reduces over (quant/weight_role.h), the last of a
// Linear [out, in], axis 1 of a conv [O, I, kh, kw], axis 0 of an ONNX MatMul [in, out]. Mergeable
// sums, like ErrorStats.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

namespace ql {

struct WeightedError {
    double sumWeightedSqError = 0; // Σ s_j (x − x̂)²
    double sumWeightedSqX = 0;     // Σ s_j x²
    std::int64_t count = 0;        // finite elements counted
    std::string importance;        // where s came from: "file: entry"

    /// Σ s_j (x − x̂)² / count.
    double mse() const { return count ? sumWeightedSqError / static_cast<double>(count) : NAN; }
    /// 10 log10(Σ s x² / Σ s (x − x̂)²): the output's signal-to-noise ratio.
    double sqnrDb() const;
    void merge(const WeightedError& o) {
        sumWeightedSqError += o.sumWeightedSqError;
        sumWeightedSqX += o.sumWeightedSqX;
        count += o.count;
    }
};

/// Per-input-channel importance (E[x_j²]) for the weighted error, as an importance file gives it.
struct ImportanceWeights {
    std::span<const float> sqMean;
    std::int64_t channels = 0;
    int matrices = 1;
    std::int64_t inner = 1; // elements per input channel step: the dims after the channel axis
    std::string origin;     // "file: entry"
};

/// Throws QuantError unless `w` fits a tensor of `n` elements (weightedError's layout below).
void checkImportanceFits(const ImportanceWeights& w, std::int64_t n);

/// The weighted sums of runs of consecutive elements, in any order of runs: the fast analysis pass
/// adds each block it has staged, a slice of the tensor per instance. The weights must fit
/// (checkImportanceFits); sums equal weightedError's to rounding.
class WeightedRuns {
public:
    WeightedRuns(const ImportanceWeights& w, std::int64_t n);
    /// x[k], xh[k] for k < len are elements first + k; `finite`: every one of them is.
    void add(const float* x, const float* xh, int len, std::int64_t first, bool finite);
    WeightedError sums;

private:
    const float* m_s;
    std::int64_t m_channels, m_inner, m_perMatrix;
};

/// x and x̂ in row-major order, s the importance per input channel: `channels` values per matrix,
/// `matrices` matrices (a mixture of experts' weight [E, out, in] has one vector per expert).
/// Element i of a matrix belongs to input channel (i / inner) % channels: `inner` is the product of
/// the dimensions after the channel axis (1 when it is the last; kh * kw for a conv's axis 1).
/// Elements where x or x̂ is not finite are left out, as ErrorStats does.
WeightedError weightedError(std::span<const float> x, std::span<const float> xhat, std::span<const float> s,
                            std::int64_t channels, int matrices = 1, std::int64_t inner = 1);

} // namespace ql
