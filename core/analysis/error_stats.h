#pragma once
// Streaming, mergeable error statistics between a tensor x and its reconstruction x̂.
// Feed chunks with add(); combine per-chunk (or per-thread) accumulators with merge().
//
// Conventions (documented in the report schema too):
// - Elements where x or x̂ is NaN/±Inf are counted and left out of every error metric.
// - Undefined values are NaN: every metric of an empty tensor; relative error and SQNR of an
//   all-zero x with non-zero error are ±Inf; with zero error SQNR is +Inf and relative error 0.
// - Cosine: 1 when both vectors are zero, 0 when exactly one is.
// - The Ascend 1/1000 and 5/1000 ratios use |x − x̂| / |x| per element; an element with x = 0
//   exceeds the threshold exactly when x̂ ≠ 0.
#include <cmath>
#include <cstdint>
#include <span>

namespace ql {

class ErrorStats {
public:
    /// Adds elements x[i], xhat[i]; `firstIndex` is x[0]'s flat index (for worst-element tracking).
    void add(std::span<const float> x, std::span<const float> xhat, std::int64_t firstIndex = 0);
    inline void addElement(float x, float xhat, std::int64_t index);
    /// Combines another accumulator (any order; sums in double).
    inline void merge(const ErrorStats& other);

    std::int64_t count() const { return m_count; }                        // every element seen
    std::int64_t finiteCount() const { return m_finite; }                 // elements the metrics cover
    std::int64_t nanCount() const { return m_nanX; }                      // NaN in x
    std::int64_t infCount() const { return m_infX; }                      // ±Inf in x
    std::int64_t nonFiniteOutputCount() const { return m_nonFiniteXhat; } // finite x, NaN/Inf x̂

    double mse() const;
    double rmse() const;
    double sqnrDb() const;
    double maxAbsError() const;
    std::int64_t worstIndex() const { return m_worstIndex; } // -1 when none
    double meanAbsError() const;
    double relError() const;
    double cosine() const;
    double ratioOver1e3() const; // share of elements with relative error > 1/1000
    double ratioOver5e3() const; // share with relative error > 5/1000
    double signalPower() const;  // mean x², for SQNR per group

    double sumSqError() const { return m_sumSqErr; }

    /// Every running sum, as reports carry them: a reader (a merged report, the GUI opening a
    /// report) rebuilds the very same statistics from them.
    struct Sums {
        std::int64_t count = 0, finite = 0, nanX = 0, infX = 0, nonFiniteXhat = 0, over1e3 = 0, over5e3 = 0;
        std::int64_t worstIndex = -1;
        double sumSqX = 0, sumSqXhat = 0, sumDot = 0, sumSqErr = 0, sumAbsErr = 0, maxAbsErr = 0;
    };
    Sums sums() const {
        return {m_count,      m_finite, m_nanX,      m_infX,   m_nonFiniteXhat, m_over1e3,   m_over5e3,
                m_worstIndex, m_sumSqX, m_sumSqXhat, m_sumDot, m_sumSqErr,      m_sumAbsErr, m_maxAbsErr};
    }
    static ErrorStats fromSums(const Sums& s) {
        ErrorStats e;
        e.m_count = s.count, e.m_finite = s.finite, e.m_nanX = s.nanX, e.m_infX = s.infX;
        e.m_nonFiniteXhat = s.nonFiniteXhat, e.m_over1e3 = s.over1e3, e.m_over5e3 = s.over5e3;
        e.m_worstIndex = s.worstIndex, e.m_sumSqX = s.sumSqX, e.m_sumSqXhat = s.sumSqXhat,
        e.m_sumDot = s.sumDot;
        e.m_sumSqErr = s.sumSqErr, e.m_sumAbsErr = s.sumAbsErr, e.m_maxAbsErr = s.maxAbsErr;
        return e;
    }

private:
    std::int64_t m_count = 0;
    std::int64_t m_finite = 0;
    std::int64_t m_nanX = 0;
    std::int64_t m_infX = 0;
    std::int64_t m_nonFiniteXhat = 0;
    double m_sumSqX = 0;
    double m_sumSqXhat = 0;
    double m_sumDot = 0;
    double m_sumSqErr = 0;
    double m_sumAbsErr = 0;
    double m_maxAbsErr = 0;
    std::int64_t m_worstIndex = -1;
    std::int64_t m_over1e3 = 0;
    std::int64_t m_over5e3 = 0;
};

namespace detail {
// The Ascend accuracy metric: |x - x̂| > t·|x|; x = 0 counts when x̂ differs at all.
inline bool exceeds(double absErr, double absX, double threshold) {
    if (absX == 0.0) return absErr != 0.0;
    return absErr > threshold * absX;
}
} // namespace detail

// Inline: the analysis calls it once per element.
inline void ErrorStats::addElement(float xf, float xhatf, std::int64_t index) {
    ++m_count;
    if (std::isnan(xf)) {
        ++m_nanX;
        return;
    }
    if (std::isinf(xf)) {
        ++m_infX;
        return;
    }
    if (!std::isfinite(xhatf)) {
        ++m_nonFiniteXhat;
        return;
    }
    const double x = xf;
    const double xhat = xhatf;
    const double e = x - xhat;
    const double ae = std::fabs(e);
    ++m_finite;
    m_sumSqX += x * x;
    m_sumSqXhat += xhat * xhat;
    m_sumDot += x * xhat;
    m_sumSqErr += e * e;
    m_sumAbsErr += ae;
    // Ties keep the lowest index, so merge order never changes the answer.
    if (ae > m_maxAbsErr || m_worstIndex < 0 || (ae == m_maxAbsErr && index < m_worstIndex)) {
        m_maxAbsErr = ae;
        m_worstIndex = index;
    }
    m_over1e3 += detail::exceeds(ae, std::fabs(x), 1e-3);
    m_over5e3 += detail::exceeds(ae, std::fabs(x), 5e-3);
}

inline void ErrorStats::merge(const ErrorStats& o) {
    m_count += o.m_count;
    m_finite += o.m_finite;
    m_nanX += o.m_nanX;
    m_infX += o.m_infX;
    m_nonFiniteXhat += o.m_nonFiniteXhat;
    m_sumSqX += o.m_sumSqX;
    m_sumSqXhat += o.m_sumSqXhat;
    m_sumDot += o.m_sumDot;
    m_sumSqErr += o.m_sumSqErr;
    m_sumAbsErr += o.m_sumAbsErr;
    m_over1e3 += o.m_over1e3;
    m_over5e3 += o.m_over5e3;
    if (o.m_worstIndex >= 0 && (m_worstIndex < 0 || o.m_maxAbsErr > m_maxAbsErr ||
                                (o.m_maxAbsErr == m_maxAbsErr && o.m_worstIndex < m_worstIndex))) {
        m_maxAbsErr = o.m_maxAbsErr;
        m_worstIndex = o.m_worstIndex;
    }
}

} // namespace ql
