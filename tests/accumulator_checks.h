#pragma once
// Two sets of the report's accumulators compared as the conformance and oracle tests require:
// counts, extremes, histograms (edges included) and grids exactly equal; floating sums within 1e-10
// relative (they are added in another order), or bit for bit when `bitwise`. The QVERIFYs return from
// these helpers only: callers check QTest::currentTestFailed() where they go on.
#include "analysis/accumulators.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <vector>

namespace qltest {

/// The relative tolerance of the floating sums (README "Statistics": sums agree with the oracle).
inline constexpr double kSumTolerance = 1e-10;

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

/// Everything but the floating sums exactly; the sums within kSumTolerance (or exactly when `bitwise`).
inline void compareAnalyses(const ql::TensorAnalysis& f, const ql::TensorAnalysis& r, bool bitwise) {
    const ql::ErrorStats &a = f.stats, &b = r.stats;
    QCOMPARE(a.count(), b.count());
    QCOMPARE(a.finiteCount(), b.finiteCount());
    QCOMPARE(a.nanCount(), b.nanCount());
    QCOMPARE(a.infCount(), b.infCount());
    QCOMPARE(a.nonFiniteOutputCount(), b.nonFiniteOutputCount());
    QVERIFY(sumsAgree(a.maxAbsError(), b.maxAbsError(), bitwise) &&
            (std::isnan(b.maxAbsError()) || a.maxAbsError() == b.maxAbsError()));
    QCOMPARE(a.worstIndex(), b.worstIndex());
    QVERIFY(sumsAgree(a.ratioOver1e3(), b.ratioOver1e3(), bitwise) &&
            sumsAgree(a.ratioOver5e3(), b.ratioOver5e3(), bitwise));
    if (bitwise) {
        QVERIFY(a.sumSqError() == b.sumSqError() ||
                (std::isnan(a.sumSqError()) && std::isnan(b.sumSqError())));
    }
    QL_CHECK_SUM(a.mse(), b.mse(), "mse");
    QL_CHECK_SUM(a.sqnrDb(), b.sqnrDb(), "sqnr");
    QL_CHECK_SUM(a.meanAbsError(), b.meanAbsError(), "mean |err|");
    QL_CHECK_SUM(a.relError(), b.relError(), "relative error");
    // Cosine divides Σ x·x̂ by √(Σx² Σx̂²): its sums' scale is 1, so its tolerance is absolute (a dot
    // product that cancels to ~1e-12 carries the rounding of terms a trillion times larger).
    QVERIFY2(bitwise ? sumsAgree(a.cosine(), b.cosine(), true)
                     : (std::isnan(a.cosine()) ? std::isnan(b.cosine())
                                               : std::fabs(a.cosine() - b.cosine()) <= kSumTolerance),
             qPrintable(QStringLiteral("cosine: %1 vs oracle %2")
                            .arg(a.cosine(), 0, 'g', 17)
                            .arg(b.cosine(), 0, 'g', 17)));

    QCOMPARE(f.codes.counts(), r.codes.counts());
    const auto &ga = f.clipping.groups(), &gb = r.clipping.groups();
    QCOMPARE(ga.size(), gb.size());
    for (std::size_t g = 0; g < ga.size(); ++g) {
        QCOMPARE(ga[g].count, gb[g].count);
        QCOMPARE(ga[g].clippedLow, gb[g].clippedLow);
        QCOMPARE(ga[g].clippedHigh, gb[g].clippedHigh);
        QCOMPARE(ga[g].flushedToZero, gb[g].flushedToZero);
        QCOMPARE(ga[g].maxAbsError, gb[g].maxAbsError);
        QL_CHECK_SUM(ga[g].clipErrorSq, gb[g].clipErrorSq, "group clip error");
        QL_CHECK_SUM(ga[g].roundErrorSq, gb[g].roundErrorSq, "group rounding error");
        QL_CHECK_SUM(ga[g].sumSqX, gb[g].sumSqX, "group signal");
    }
    QCOMPARE(f.clipping.groupCount(), r.clipping.groupCount());
    const ql::GroupClipping ta = f.clipping.total(), tb = r.clipping.total();
    QCOMPARE(ta.count, tb.count);
    QCOMPARE(ta.clippedLow, tb.clippedLow);
    QCOMPARE(ta.clippedHigh, tb.clippedHigh);
    QCOMPARE(ta.flushedToZero, tb.flushedToZero);
    QCOMPARE(ta.maxAbsError, tb.maxAbsError);
    QL_CHECK_SUM(ta.clipErrorSq, tb.clipErrorSq, "total clip error");
    QL_CHECK_SUM(ta.roundErrorSq, tb.roundErrorSq, "total rounding error");
    QL_CHECK_SUM(ta.sumSqX, tb.sumSqX, "total signal");
    compareHistograms(f.error, r.error, "error histogram");
    if (QTest::currentTestFailed()) return;
    compareHistograms(f.absErrorLog, r.absErrorLog, "log |error| histogram");
    if (QTest::currentTestFailed()) return;
    compareHistograms(f.values, r.values, "value histogram");
    if (QTest::currentTestFailed()) return;
    compareHistograms(f.scales, r.scales, "scale histogram");
    if (QTest::currentTestFailed()) return;
    QCOMPARE(f.grid, r.grid);
    QCOMPARE(f.gridGroup, r.gridGroup);
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
