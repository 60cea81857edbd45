#include "analysis/statistics_agreement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ql {
namespace {

class Differences {
public:
    explicit Differences(double tolerance)
        : m_tolerance(tolerance) {}

    template <class T> void exact(const T& a, const T& b, const char* what) {
        if (!(a == b)) m_lines.emplace_back(std::string(what) + " differs");
    }
    /// Equal, or both NaN.
    void sameValue(double a, double b, const char* what) {
        if (!(a == b || (std::isnan(a) && std::isnan(b))))
            m_lines.emplace_back(std::string(what) + " differs");
    }
    /// Two NaNs agree, as do equal infinities; otherwise within the relative tolerance.
    void sum(double a, double b, const char* what) {
        if (agree(a, b, std::max(std::fabs(b), 1e-300) * m_tolerance)) return;
        char text[160];
        std::snprintf(text, sizeof text, "%s: %.17g vs %.17g", what, a, b);
        m_lines.emplace_back(text);
    }
    /// A ratio of sums whose scale is 1 (cosine): the tolerance is absolute.
    void unitRatio(double a, double b, const char* what) {
        if (!agree(a, b, m_tolerance)) sum(a, b, what);
    }
    void histogram(const Histogram& a, const Histogram& b, const std::string& what) {
        if (a.edges() != b.edges())
            m_lines.push_back(what + ": edges differ");
        else if (a.counts() != b.counts() || a.underflow() != b.underflow() || a.overflow() != b.overflow() ||
                 a.nanCount() != b.nanCount())
            m_lines.push_back(what + ": counts differ");
    }
    void group(const GroupClipping& a, const GroupClipping& b, const std::string& what) {
        if (a.count != b.count || a.clippedLow != b.clippedLow || a.clippedHigh != b.clippedHigh ||
            a.flushedToZero != b.flushedToZero || a.maxAbsError != b.maxAbsError)
            m_lines.push_back(what + ": counts or largest error differ");
        sum(a.clipErrorSq, b.clipErrorSq, (what + " clipping error").c_str());
        sum(a.roundErrorSq, b.roundErrorSq, (what + " rounding error").c_str());
        sum(a.sumSqX, b.sumSqX, (what + " signal").c_str());
    }
    std::vector<std::string> lines() && { return std::move(m_lines); }

private:
    bool agree(double a, double b, double within) const {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
        if (m_tolerance == 0 || std::isinf(a) || std::isinf(b)) return a == b;
        return std::fabs(a - b) <= within || std::fabs(a - b) < 1e-300;
    }

    double m_tolerance;
    std::vector<std::string> m_lines;
};

} // namespace

std::vector<std::string> statisticsDifferences(const TensorAnalysis& got, const TensorAnalysis& want,
                                               double tolerance) {
    Differences d(tolerance);
    const ErrorStats &a = got.stats, &b = want.stats;
    d.exact(a.count(), b.count(), "element count");
    d.exact(a.finiteCount(), b.finiteCount(), "finite count");
    d.exact(a.nanCount(), b.nanCount(), "NaN count");
    d.exact(a.infCount(), b.infCount(), "Inf count");
    d.exact(a.nonFiniteOutputCount(), b.nonFiniteOutputCount(), "non-finite reconstruction count");
    d.sameValue(a.maxAbsError(), b.maxAbsError(), "largest |error|");
    d.exact(a.worstIndex(), b.worstIndex(), "worst element");
    d.sum(a.ratioOver1e3(), b.ratioOver1e3(), "share over 1/1000");
    d.sum(a.ratioOver5e3(), b.ratioOver5e3(), "share over 5/1000");
    d.sum(a.mse(), b.mse(), "MSE");
    d.sum(a.sqnrDb(), b.sqnrDb(), "SQNR");
    d.sum(a.meanAbsError(), b.meanAbsError(), "mean |error|");
    d.sum(a.relError(), b.relError(), "relative error");
    d.unitRatio(a.cosine(), b.cosine(), "cosine");
    d.exact(got.codes.counts(), want.codes.counts(), "code counts");
    d.exact(got.clipping.groupCount(), want.clipping.groupCount(), "group count");
    const auto &ga = got.clipping.groups(), &gb = want.clipping.groups();
    d.exact(ga.size(), gb.size(), "clipping rows kept");
    for (std::size_t g = 0; g < std::min(ga.size(), gb.size()); ++g)
        d.group(ga[g], gb[g], "group " + std::to_string(g));
    d.group(got.clipping.total(), want.clipping.total(), "clipping total");
    d.histogram(got.error, want.error, "error histogram");
    d.histogram(got.absErrorLog, want.absErrorLog, "log |error| histogram");
    d.histogram(got.values, want.values, "value histogram");
    d.histogram(got.scales, want.scales, "scale histogram");
    d.exact(got.grid, want.grid, "grid");
    d.exact(got.gridGroup, want.gridGroup, "grid group");
    return std::move(d).lines();
}

} // namespace ql
