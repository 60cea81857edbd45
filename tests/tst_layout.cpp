// The scale indexer: every layout maps elements to the scale an operator would use.
#include "base/error.h"
#include "quant/layout.h"
#include "quant/row_walker.h"

#include <QTest>

using namespace ql;

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    void perChannelAndBlocks();
    void ragged();
    void forEachMatchesScaleIndexOf();
    void slicesCoverTheWhole();
    void walkerSpansAreWholeBlocks();
    void errors();
};

void TestLayout::perChannelAndBlocks() {
    // TensorRT (4,8) weights with (2,8) scales: rows 0,1 use scale row 0 (spec §2).
    const Layout block{{DimMapping::blocked(2), DimMapping::full()}};
    QCOMPARE(block.scaleShape({4, 8}), (Shape{2, 8}));
    ScaleIndexer idx(block, {4, 8});
    QCOMPARE(idx.scaleIndexOf(0 * 8 + 5), std::int64_t(5));
    QCOMPARE(idx.scaleIndexOf(1 * 8 + 5), std::int64_t(5));
    QCOMPARE(idx.scaleIndexOf(2 * 8 + 5), std::int64_t(13));
    const Layout shortTail{{DimMapping::full(), DimMapping::blocked(4)}};
    QCOMPARE(shortTail.scaleShape({2, 10}), (Shape{2, 3}));
    QCOMPARE(ScaleIndexer(shortTail, {2, 10}).scaleIndexOf(19), std::int64_t(5));
}

void TestLayout::ragged() {
    const Layout r{{DimMapping::ragged({1, 4, 6, 6}), DimMapping::full()}};
    ScaleIndexer idx(r, {6, 4});
    QCOMPARE(idx.scaleCount(), std::int64_t(16));
    QCOMPARE(idx.scaleIndexOf(0), std::int64_t(0));             // row 0 -> group 0
    QCOMPARE(idx.scaleIndexOf(3 * 4 + 1), std::int64_t(4 + 1)); // row 3 -> group 1
    QCOMPARE(idx.scaleIndexOf(5 * 4 + 3), std::int64_t(8 + 3)); // row 5 -> group 2 (group 3 empty)
}

void TestLayout::forEachMatchesScaleIndexOf() {
    const Layout l{{DimMapping::blocked(2), DimMapping::shared(), DimMapping::ragged({2, 5})}};
    const Shape shape{3, 2, 5};
    ScaleIndexer idx(l, shape);
    std::int64_t expectedFlat = 0;
    idx.forEach([&](std::int64_t flat, std::int64_t s) {
        QCOMPARE(flat, expectedFlat++);
        QCOMPARE(s, idx.scaleIndexOf(flat));
    });
    QCOMPARE(expectedFlat, std::int64_t(30));
}

void TestLayout::slicesCoverTheWhole() {
    const Layout l{{DimMapping::blocked(2), DimMapping::full(), DimMapping::ragged({3, 3, 7})}};
    const Shape shape{5, 3, 7};
    ScaleIndexer idx(l, shape);
    std::vector<std::pair<std::int64_t, std::int64_t>> whole, sliced;
    idx.forEach([&](std::int64_t i, std::int64_t s) { whole.emplace_back(i, s); });
    for (std::int64_t cut : {1, 6, 7, 8, 20, 104}) {
        sliced.clear();
        idx.forEachIn(0, cut, [&](std::int64_t i, std::int64_t s) { sliced.emplace_back(i, s); });
        idx.forEachIn(cut, 105, [&](std::int64_t i, std::int64_t s) { sliced.emplace_back(i, s); });
        QCOMPARE(sliced, whole);
    }
    sliced.clear();
    idx.forEachIn(9, 9, [&](std::int64_t i, std::int64_t s) { sliced.emplace_back(i, s); });
    QVERIFY(sliced.empty());
}

// RowWalker::forSpans gives every element of a range once, in order, with the scale forSegments
// (and the indexer) give it; a span of blocks holds whole blocks only, starting on a block.
void TestLayout::walkerSpansAreWholeBlocks() {
    const std::vector<std::pair<Layout, Shape>> cases{
        {Layout{{DimMapping::full(), DimMapping::blocked(4)}}, Shape{3, 10}}, // a short last block
        {Layout{{DimMapping::blocked(2), DimMapping::blocked(16)}}, Shape{5, 64}},
        {Layout{{DimMapping::shared(), DimMapping::full(), DimMapping::blocked(3)}}, Shape{2, 2, 9}},
        {Layout{{DimMapping::full(), DimMapping::ragged({1, 4, 6})}}, Shape{3, 6}},
        {Layout{{DimMapping::shared(), DimMapping::full()}}, Shape{4, 5}},
        {Layout{{DimMapping::full(), DimMapping::shared()}}, Shape{4, 5}},
    };
    for (const auto& [layout, shape] : cases) {
        ResolvedSpec plan;
        plan.shape = shape;
        plan.layout = layout;
        const RowWalker walker(plan);
        const ScaleIndexer idx(layout, shape);
        const std::int64_t n = elementCount(shape);
        const std::int64_t block =
            layout.dims.back().kind == DimMapping::Kind::Block ? layout.dims.back().block : 0;
        std::int64_t spans = 0;
        for (std::int64_t begin = 0; begin < n; begin += 3)
            for (std::int64_t end = begin + 1; end <= n; end += 5) {
                std::vector<std::pair<std::int64_t, std::int64_t>> bySegments, bySpans;
                walker.forSegments(begin, end, [&](const Segment& s) {
                    for (std::int64_t k = 0; k < s.length; ++k)
                        bySegments.emplace_back(s.begin + k, s.scale + (s.perElement ? k : 0));
                });
                walker.forSpans(begin, end, [&](const Segment& s) {
                    if (s.runLength != 0) {
                        QCOMPARE(s.runLength, block);
                        QCOMPARE(s.length % block, std::int64_t{0});
                        QCOMPARE(s.begin % walker.inner() % block, std::int64_t{0});
                        ++spans;
                    }
                    for (std::int64_t k = 0; k < s.length; ++k) {
                        const std::int64_t run = s.runLength != 0 ? k / s.runLength : 0;
                        bySpans.emplace_back(s.begin + k, s.scale + (s.perElement ? k : run));
                    }
                });
                QCOMPARE(bySpans, bySegments);
                QCOMPARE(static_cast<std::int64_t>(bySpans.size()), end - begin);
                for (const auto& [flat, scale] : bySpans)
                    QCOMPARE(scale, idx.scaleIndexOf(flat));
            }
        QCOMPARE(spans > 0, block != 0); // blocks came together wherever there were whole ones
    }
}

void TestLayout::errors() {
    QVERIFY_THROWS_EXCEPTION(QuantError, ScaleIndexer(Layout{{DimMapping::full()}}, Shape{2, 2}));
    QVERIFY_THROWS_EXCEPTION(QuantError, ScaleIndexer(Layout{{DimMapping::ragged({3})}}, Shape{4}));
    QVERIFY_THROWS_EXCEPTION(QuantError, ScaleIndexer(Layout{{DimMapping::blocked(0)}}, Shape{4}));
    QVERIFY_THROWS_EXCEPTION(QuantError, normalizeAxis(-3, 2));
    QCOMPARE(normalizeAxis(-1, 2), 1);
}

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
