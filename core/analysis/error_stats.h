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
#include "base/host_device.h"

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

    std::int64_t count() const { return m_s.count; }                        // every element seen
    std::int64_t finiteCount() const { return m_s.finite; }                 // elements the metrics cover
    std::int64_t nanCount() const { return m_s.nanX; }                      // NaN in x
    std::int64_t infCount() const { return m_s.infX; }                      // ±Inf in x
    std::int64_t nonFiniteOutputCount() const { return m_s.nonFiniteXhat; } // finite x, NaN/Inf x̂

    double mse() const;
    double rmse() const;
    double sqnrDb() const;
    double maxAbsError() const;
    std::int64_t worstIndex() const { return m_s.worstIndex; } // -1 when none
    double meanAbsError() const;
    double relError() const;
    double cosine() const;
    double ratioOver1e3() const; // share of elements with relative error > 1/1000
    double ratioOver5e3() const; // share with relative error > 5/1000
    double signalPower() const;  // mean x², for SQNR per group

    double sumSqError() const { return m_s.sumSqErr; }

    /// Every running sum, as reports carry them: a reader (a merged report, the GUI opening a
    /// report) rebuilds the very same statistics from them. A pass that accumulates elsewhere (a
    /// device's kernel) adds into its own Sums with addElementTo and mergeInto.
    struct Sums {
        std::int64_t count = 0, finite = 0, nanX = 0, infX = 0, nonFiniteXhat = 0, over1e3 = 0, over5e3 = 0;
        std::int64_t worstIndex = -1;
        double sumSqX = 0, sumSqXhat = 0, sumDot = 0, sumSqErr = 0, sumAbsErr = 0, maxAbsErr = 0;
    };
    Sums sums() const { return m_s; }
    static ErrorStats fromSums(const Sums& s) {
        ErrorStats e;
        e.m_s = s;
        return e;
    }

    /// The one element rule, as addElement applies it.
    QL_HOST_DEVICE static inline void addElementTo(Sums& s, float x, float xhat, std::int64_t index);
    /// The one merge rule (any order; sums in double), as merge applies it.
    QL_HOST_DEVICE static inline void mergeInto(Sums& s, const Sums& o);

private:
    Sums m_s;
};

namespace detail {
// The Ascend accuracy metric: |x - x̂| > t·|x|; x = 0 counts when x̂ differs at all.
QL_HOST_DEVICE inline bool exceeds(double absErr, double absX, double threshold) {
    if (absX == 0.0) return absErr != 0.0;
    return absErr > threshold * absX;
}
} // namespace detail

// Inline: the analysis calls it once per element.
inline void ErrorStats::addElement(float xf, float xhatf, std::int64_t index) {
    addElementTo(m_s, xf, xhatf, index);
}

inline void ErrorStats::merge(const ErrorStats& o) {
    mergeInto(m_s, o.m_s);
}

QL_HOST_DEVICE inline void ErrorStats::addElementTo(Sums& s, float xf, float xhatf, std::int64_t index) {
    ++s.count;
    if (xf != xf) {
        ++s.nanX;
        return;
    }
    if (xf - xf != 0.0f) { // ±Inf (x − x is NaN exactly for Inf and NaN)
        ++s.infX;
        return;
    }
    if (xhatf - xhatf != 0.0f) {
        ++s.nonFiniteXhat;
        return;
    }
    const double x = xf;
    const double xhat = xhatf;
    const double e = x - xhat;
    const double ae = e < 0 ? -e : e;
    ++s.finite;
    s.sumSqX += x * x;
    s.sumSqXhat += xhat * xhat;
    s.sumDot += x * xhat;
    s.sumSqErr += e * e;
    s.sumAbsErr += ae;
    // Ties keep the lowest index, so merge order never changes the answer.
    if (ae > s.maxAbsErr || s.worstIndex < 0 || (ae == s.maxAbsErr && index < s.worstIndex)) {
        s.maxAbsErr = ae;
        s.worstIndex = index;
    }
    const double absX = x < 0 ? -x : x;
    s.over1e3 += detail::exceeds(ae, absX, 1e-3);
    s.over5e3 += detail::exceeds(ae, absX, 5e-3);
}

QL_HOST_DEVICE inline void ErrorStats::mergeInto(Sums& s, const Sums& o) {
    s.count += o.count;
    s.finite += o.finite;
    s.nanX += o.nanX;
    s.infX += o.infX;
    s.nonFiniteXhat += o.nonFiniteXhat;
    s.sumSqX += o.sumSqX;
    s.sumSqXhat += o.sumSqXhat;
    s.sumDot += o.sumDot;
    s.sumSqErr += o.sumSqErr;
    s.sumAbsErr += o.sumAbsErr;
    s.over1e3 += o.over1e3;
    s.over5e3 += o.over5e3;
    if (o.worstIndex >= 0 && (s.worstIndex < 0 || o.maxAbsErr > s.maxAbsErr ||
                              (o.maxAbsErr == s.maxAbsErr && o.worstIndex < s.worstIndex))) {
        s.maxAbsErr = o.maxAbsErr;
        s.worstIndex = o.worstIndex;
    }
}

} // namespace ql
