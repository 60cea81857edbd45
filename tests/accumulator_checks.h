#pragma once
// Two sets of the report's accumulators compared as the conformance and oracle tests require:
// counts, extremes, histograms (edges included) and grids exactly equal; floating sums within 1e-10
// relative (they are added in another order), or bit for bit when `bitwise`. The QVERIFYs return from
// these helpers only: callers check QTest::currentTestFailed() where they go on.
#include "analysis/accumulators.h"
#include "analysis/statistics_agreement.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <vector>

namespace qltest {

/// The relative tolerance of the floating sums (backends/README.md, "What every backend returns": sums agree
/// with the oracle).
inline constexpr double kSumTolerance = ql::kStatisticsSumTolerance;

inline bool sumsAgree(double a, double b, bool bitwise) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (bitwise) return a == b;
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::fabs(a - b) <= kSumTolerance * std::max(std::fabs(b), 1e-300) || std::fabs(a - b) < 1e-300;
}

#define QL_CHECK_SUM(a, b, what)                                                                             \
    QVERIFY2(qltest::sumsAgree((a), (b), bitwise), qPrintable(QStringLiteral("%1: %2 vs oracle %3")          \
                                                                  .arg(QLatin1String(what))                  \
                                                                  .arg(a, 0, 'g', 17)                        \
                                                                  .arg(b, 0, 'g', 17)))

inline void compareHistograms(const ql::Histogram& a, const ql::Histogram& b, const char* what) {
    QVERIFY2(a.edges() == b.edges(), what);
    QVERIFY2(a.counts() == b.counts(), what);
    QVERIFY2(a.underflow() == b.underflow() && a.overflow() == b.overflow() && a.nanCount() == b.nanCount(),
             what);
}

/// Everything but the floating sums exactly; the sums within kSumTolerance (or exactly when `bitwise`):
/// core's rule (statisticsDifferences), every difference named.
inline void compareAnalyses(const ql::TensorAnalysis& f, const ql::TensorAnalysis& r, bool bitwise) {
    const std::vector<std::string> lines = ql::statisticsDifferences(f, r, bitwise ? 0.0 : kSumTolerance);
    std::string joined;
    for (const std::string& line : lines)
        joined += (joined.empty() ? "" : "; ") + line;
    QVERIFY2(lines.empty(), joined.c_str());
}

/// A request for every accumulator, the weighted error sums included: `importance` is filled with one
/// positive weight per channel of the last axis and must outlive the request.
inline ql::StatisticsRequest everyStatistic(const ql::Shape& shape, std::vector<float>& importance) {
    const std::int64_t channels = shape.empty() ? 1 : shape.back();
    importance.resize(static_cast<std::size_t>(channels));
    for (std::size_t j = 0; j < importance.size(); ++j)
        importance[j] = 0.25f + 0.5f * static_cast<float>(j % 7);
    ql::StatisticsRequest request;
    request.importance = ql::ImportanceWeights{importance, channels, 1, 1, "test: every channel"};
    return request;
}

/// A backend's accumulators against the oracle's: the analysis, and the weighted error sums when
/// either has them.
inline void compareAccumulators(const ql::TensorAccumulators& got, const ql::TensorAccumulators& want,
                                bool bitwise = false) {
    compareAnalyses(got.analysis, want.analysis, bitwise);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(got.weighted.has_value(), want.weighted.has_value());
    if (!want.weighted) return;
    QCOMPARE(got.weighted->count, want.weighted->count);
    QCOMPARE(got.weighted->importance, want.weighted->importance);
    QL_CHECK_SUM(got.weighted->sumWeightedSqError, want.weighted->sumWeightedSqError, "weighted error");
    QL_CHECK_SUM(got.weighted->sumWeightedSqX, want.weighted->sumWeightedSqX, "weighted signal");
}

} // namespace qltest
