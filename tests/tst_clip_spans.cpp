// Clipping rows gathered into spans for the clipping plot (core/analysis/clip_spans): the span sizes,
// where each span sits, and what its merged counts, flags and worst SQNR are.
#include "analysis/clip_spans.h"

#include <QtTest>
#include <cmath>

using namespace ql;

namespace {

// A group of `count` elements whose signal is sumSqX and whose errors are as given.
GroupClipping group(std::int64_t count, double sumSqX, double clipErrorSq, double roundErrorSq,
                    std::int64_t low = 0, std::int64_t high = 0) {
    GroupClipping g;
    g.count = count;
    g.sumSqX = sumSqX;
    g.clipErrorSq = clipErrorSq;
    g.roundErrorSq = roundErrorSq;
    g.clippedLow = low;
    g.clippedHigh = high;
    return g;
}

GroupRows rows(std::size_t n) {
    GroupRows r(n);
    for (std::size_t i = 0; i < n; ++i)
        r[i] = group(16, 100.0 * static_cast<double>(i + 1), 0, 1);
    return r;
}

} // namespace

class TestClipSpans : public QObject {
    Q_OBJECT
private slots:
    void spanSize_data();
    void spanSize();
    void keysCoverEveryGroup_data();
    void keysCoverEveryGroup();
    void oneGroupPerSpanKeepsTheRows();
    void mergedCountsAndFlags();
    void worstSqnrSkipsNonFinite();
    void noGroupsNoSpans();
};

void TestClipSpans::spanSize_data() {
    QTest::addColumn<qulonglong>("groups");
    QTest::addColumn<qulonglong>("maxBars");
    QTest::addColumn<qulonglong>("size");
    QTest::addRow("none") << 0ull << 2048ull << 1ull;
    QTest::addRow("channels/4096") << 4096ull << 2048ull << 2ull;
    QTest::addRow("at-limit") << 2048ull << 2048ull << 1ull;
    QTest::addRow("one-over-limit") << 2049ull << 2048ull << 2ull;
    QTest::addRow("nvfp4/4096x4096") << 1048576ull << 2048ull << 512ull;
    QTest::addRow("nvfp4/4096x4096+1") << 1048577ull << 2048ull << 513ull;
    QTest::addRow("small-limit") << 10ull << 3ull << 4ull;
    QTest::addRow("zero-limit-is-one-bar") << 5ull << 0ull << 5ull;
}

void TestClipSpans::spanSize() {
    QFETCH(qulonglong, groups);
    QFETCH(qulonglong, maxBars);
    QFETCH(qulonglong, size);
    QCOMPARE(clipSpanSize(groups, maxBars), size);
}

void TestClipSpans::keysCoverEveryGroup_data() {
    QTest::addColumn<qulonglong>("groups");
    QTest::addColumn<qulonglong>("maxBars");
    QTest::addRow("even") << 12ull << 3ull;
    QTest::addRow("ragged-tail") << 10ull << 3ull;
    QTest::addRow("one-over-limit") << 2049ull << 2048ull;
    QTest::addRow("nvfp4-like") << 100003ull << 2048ull;
}

void TestClipSpans::keysCoverEveryGroup() {
    QFETCH(qulonglong, groups);
    QFETCH(qulonglong, maxBars);
    const GroupRows r = rows(groups);
    const std::size_t size = clipSpanSize(groups, maxBars);
    const std::vector<ClipSpan> spans = clipSpans(r, maxBars);
    QVERIFY(spans.size() <= maxBars);
    QCOMPARE(spans.size(), (groups + size - 1) / size);
    std::int64_t elements = 0;
    for (std::size_t k = 0; k < spans.size(); ++k) {
        // Span k covers groups [k·size, min(groups, (k+1)·size)) and sits in their middle.
        const std::size_t g0 = k * size;
        const std::size_t g1 = std::min<std::size_t>(groups, g0 + size);
        QCOMPARE(spans[k].key, 0.5 * static_cast<double>(g0 + g1 - 1));
        QCOMPARE(spans[k].merged.count, static_cast<std::int64_t>(16 * (g1 - g0)));
        elements += spans[k].merged.count;
    }
    QCOMPARE(elements, static_cast<std::int64_t>(16 * groups));
}

void TestClipSpans::oneGroupPerSpanKeepsTheRows() {
    GroupRows r;
    r.push_back(group(4, 10, 2, 1, 1, 0));
    r.push_back(group(8, 20, 0, 3, 0, 0));
    r.push_back(group(2, 5, 1, 0, 0, 2));
    const std::vector<ClipSpan> spans = clipSpans(r);
    QCOMPARE(spans.size(), std::size_t{3});
    for (std::size_t k = 0; k < spans.size(); ++k) {
        QCOMPARE(spans[k].key, static_cast<double>(k));
        QCOMPARE(spans[k].merged.count, r[k].count);
        QCOMPARE(spans[k].merged.clippedLow, r[k].clippedLow);
        QCOMPARE(spans[k].merged.clippedHigh, r[k].clippedHigh);
        QCOMPARE(spans[k].worstSqnr, r[k].sqnrDb());
    }
    QCOMPARE(spans[0].clippingDominates, 1); // 2 > 1
    QCOMPARE(spans[1].clippingDominates, 0);
    QCOMPARE(spans[2].clippingDominates, 1);
}

void TestClipSpans::mergedCountsAndFlags() {
    // Six groups in spans of two: the middle span holds both dominated groups.
    GroupRows r;
    r.push_back(group(4, 10, 0, 1));
    r.push_back(group(4, 10, 0, 1));
    r.push_back(group(4, 10, 5, 1, 2, 0));
    r.push_back(group(6, 10, 3, 1, 0, 1));
    r.push_back(group(4, 10, 1, 1, 1, 1)); // equal errors: clipping does not dominate
    r.push_back(group(4, 10, 0, 1));
    const std::vector<ClipSpan> spans = clipSpans(r, 3);
    QCOMPARE(spans.size(), std::size_t{3});
    QCOMPARE(spans[0].clippingDominates, 0);
    QCOMPARE(spans[1].clippingDominates, 2);
    QCOMPARE(spans[2].clippingDominates, 0);
    QCOMPARE(spans[1].merged.count, 10);
    QCOMPARE(spans[1].merged.clippedLow, 2);
    QCOMPARE(spans[1].merged.clippedHigh, 1);
    QCOMPARE(spans[1].merged.clipErrorSq, 8.0);
    QCOMPARE(spans[2].merged.clippedLow, 1);
    QCOMPARE(spans[1].key, 2.5);
}

void TestClipSpans::worstSqnrSkipsNonFinite() {
    GroupRows r;
    r.push_back(group(4, 100, 0, 0));  // exact: +Inf
    r.push_back(group(4, 100, 0, 1));  // 20 dB
    r.push_back(group(0, 0, 0, 0));    // empty: NaN
    r.push_back(group(4, 100, 0, 10)); // 10 dB, the worst
    r.push_back(group(0, 0, 0, 0));    // a span of non-finite groups only
    r.push_back(group(4, 100, 0, 0));
    r.push_back(group(4, 0, 0, 1)); // no signal: −Inf, which is not finite either
    r.push_back(group(4, 100, 0, 1));
    const std::vector<ClipSpan> spans = clipSpans(r, 2);
    QCOMPARE(spans.size(), std::size_t{2});
    QCOMPARE(spans[0].worstSqnr, 10.0);
    QCOMPARE(spans[1].worstSqnr, 20.0);
    const std::vector<ClipSpan> pairs = clipSpans(r, 4);
    QCOMPARE(pairs.size(), std::size_t{4});
    QCOMPARE(pairs[0].worstSqnr, 20.0);
    QCOMPARE(pairs[1].worstSqnr, 10.0);
    QVERIFY(std::isnan(pairs[2].worstSqnr));
    QCOMPARE(pairs[3].worstSqnr, 20.0);
}

void TestClipSpans::noGroupsNoSpans() {
    QVERIFY(clipSpans(GroupRows{}).empty());
}

QTEST_GUILESS_MAIN(TestClipSpans)
#include "tst_clip_spans.moc"
