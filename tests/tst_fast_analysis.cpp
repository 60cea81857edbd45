// The fast analysis (analyze: values read in place, slices on every core) against the scalar
// oracle (analyzeReference) over the conformance grid of presets, layouts and targets, in f32,
// bf16 and f16: counts, extremes, histograms and grids exactly equal; floating sums within 1e-10
// relative (they are added in another order); and the same bits whatever the thread count and
// whichever ISA build of the pass runs (AVX-512, AVX2 or the baseline).
#include "accumulator_checks.h"
#include "analysis/analyzer.h"
#include "analysis/clip_edge_rule.h"
#include "analysis/histogram_filler.h"
#include "backend_test_util.h"
#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "cpu/cpu_reference_backend.h"
#include "test_parts.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

using namespace ql;
using namespace qltest;

namespace {

// Large enough for several slices, odd enough for short rows and groups.
const std::vector<Shape>& analysisShapes() {
    static const std::vector<Shape> s{{64, 256}, {33, 129}, {3, 5, 640}, {300, 1031}, {70001}};
    return s;
}

} // namespace

class TestFastAnalysis : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void matchesOracle_data();
    void matchesOracle();
    void logBinsAgreeWithLog10();
    void fillerCountsAsAddDoes_data();
    void fillerCountsAsAddDoes();
    void rowTablesStartZeroed();
    void widestGroupAsScanFinds();
    void progressStepsThroughTheSlices();
};

void TestFastAnalysis::initTestCase() {
    QStringList runs;
    for (auto [isa, name] : {std::pair{AnalysisIsa::Avx512, "avx512"}, std::pair{AnalysisIsa::Avx2, "avx2"},
                             std::pair{AnalysisIsa::Baseline, "baseline"}})
        if (analysisIsa(isa) == isa) runs << QLatin1String(name);
    qInfo("builds of the pass this CPU runs: %s", qPrintable(runs.join(u", ")));
    QVERIFY(runs.contains(u"baseline"));
}

void TestFastAnalysis::matchesOracle_data() {
    QTest::addColumn<int>("spec");
    QTest::addColumn<int>("shape");
    QTest::addColumn<int>("dtype");
    const auto specs = conformanceSpecs();
    long row = 0;
    for (std::size_t s = 0; s < specs.size(); ++s)
        for (std::size_t sh = 0; sh < analysisShapes().size(); ++sh)
            for (DType dt : {DType::F32, DType::BF16, DType::F16})
                if (inThisPart(row++))
                    QTest::addRow("%s/%s/%s", specs[s].name, toString(analysisShapes()[sh]).c_str(),
                                  std::string(nameOf(dt)).c_str())
                        << static_cast<int>(s) << static_cast<int>(sh) << static_cast<int>(dt);
}

void TestFastAnalysis::matchesOracle() {
    QFETCH(int, spec);
    QFETCH(int, shape);
    QFETCH(int, dtype);
    const Shape& sh = analysisShapes()[static_cast<std::size_t>(shape)];
    ResolvedSpec plan;
    try {
        plan = resolveSpec(conformanceSpecs()[static_cast<std::size_t>(spec)].spec, sh);
    } catch (const QuantError& e) { // shown as a skip with its reason, never dropped silently
        QSKIP(e.what());
    }
    const Tensor tensor =
        tensorOf(conformanceValues(elementCount(sh), 11 + shape), sh, static_cast<DType>(dtype));
    const std::vector<float> x = tensor.toFloatVector();
    BackendTask job;
    job.plan = plan;
    job.values = x;
    const Result ref = CpuReferenceBackend().run(job);
    const ValuesView view = *ValuesView::of(tensor);

    const TensorAnalysis oracle = analyzeReference(plan, ref.params, ref.codes, x);
    AnalysisOptions one;
    one.threads = 1;
    const TensorAnalysis fast1 = analyze(plan, ref.params, ref.codes, view, one);
    compareAnalyses(fast1, oracle, false);
    // Neither the thread count nor the ISA the pass was built for changes a bit (each build this CPU
    // runs: initTestCase names them; one it lacks would run the widest it has, already checked).
    for (AnalysisIsa isa : {AnalysisIsa::Avx512, AnalysisIsa::Avx2, AnalysisIsa::Baseline}) {
        if (analysisIsa(isa) != isa) continue;
        AnalysisOptions three;
        three.threads = 3;
        three.isa = isa;
        compareAnalyses(analyze(plan, ref.params, ref.codes, view, three), fast1, true);
    }
    // Rows for the first groups only (a whole-model run's, sized to its report): what the oracle
    // leaves after keepFirstGroups, total included.
    for (std::size_t rows : {std::size_t{0}, static_cast<std::size_t>(plan.scaleCount / 3)}) {
        AnalysisOptions some;
        some.threads = 3;
        some.groupRows = rows;
        TensorAnalysis kept = oracle;
        kept.clipping.keepFirstGroups(rows);
        const TensorAnalysis fastKept = analyze(plan, ref.params, ref.codes, view, some);
        QCOMPARE(fastKept.clipping.groups().size(), std::min<std::size_t>(rows, plan.scaleCount));
        compareAnalyses(fastKept, kept, false);
        // The tensor's sums and the groups' total are the same bits whichever groups have rows (a
        // tensor run keeps them all, a model run what its report lists).
        const ErrorStats &k = fastKept.stats, &all = fast1.stats;
        const GroupClipping tk = fastKept.clipping.total(), tall = fast1.clipping.total();
        for (auto [a, b] :
             {std::pair{k.sumSqError(), all.sumSqError()}, std::pair{k.mse(), all.mse()},
              std::pair{k.sqnrDb(), all.sqnrDb()}, std::pair{k.cosine(), all.cosine()},
              std::pair{k.meanAbsError(), all.meanAbsError()}, std::pair{tk.clipErrorSq, tall.clipErrorSq},
              std::pair{tk.roundErrorSq, tall.roundErrorSq}, std::pair{tk.sumSqX, tall.sumSqX},
              std::pair{tk.maxAbsError, tall.maxAbsError}})
            QVERIFY(a == b || (std::isnan(a) && std::isnan(b)));
    }
}

// The log histogram's bins, found from exponent bits and value-space edges, are the bins of
// log10(v) except within rounding of an edge.
void TestFastAnalysis::logBinsAgreeWithLog10() {
    const Histogram h(3.7e-9, 0.42, 60, Histogram::Scale::Log10);
    const double a = std::log10(3.7e-9), w = (std::log10(0.42) - a) / 60;
    const auto edges = h.edges();
    Histogram probe = h;
    std::int64_t checked = 0;
    for (double v = 3.7e-9; v <= 0.42; v *= 1.0009) {
        Histogram one(3.7e-9, 0.42, 60, Histogram::Scale::Log10);
        one.add(v);
        const auto& c = one.counts();
        const auto bin = std::find(c.begin(), c.end(), 1) - c.begin();
        QVERIFY(v >= edges[static_cast<std::size_t>(bin)] &&
                (v < edges[static_cast<std::size_t>(bin) + 1] || bin == 59));
        const double t = (std::log10(v) - a) / w;
        if (std::fabs(t - std::round(t)) > 1e-9) QCOMPARE(bin, static_cast<long>(std::floor(t)));
        probe.add(v);
        ++checked;
    }
    QCOMPARE(probe.total(), checked);
}

// The block filler (float lanes, exact double near an edge) against Histogram::add, value for value,
// on ranges that stress its error bound: edges and their float neighbours, values a rounding away
// from them, zeros, negatives, subnormals, overflow and NaN.
void TestFastAnalysis::fillerCountsAsAddDoes_data() {
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<int>("bins");
    QTest::addColumn<bool>("log");
    QTest::newRow("error ±0.02, 101 bins") << -0.0223 << 0.0223 << 101 << false;
    QTest::newRow("values [-5.3, 4.9], 256 bins") << -5.3 << 4.9 << 256 << false;
    QTest::newRow("far from zero [1000, 1001]") << 1000.0 << 1001.0 << 256 << false;
    QTest::newRow("tiny [1e-30, 3e-30]") << 1e-30 << 3e-30 << 64 << false;
    QTest::newRow("float's whole range") << -3.4e38 << 3.4e38 << 101 << false;
    QTest::newRow("one value") << 0.25 << 0.25 << 256 << false;
    QTest::newRow("log |error| [3.7e-9, 0.42]") << 3.7e-9 << 0.42 << 60 << true;
    QTest::newRow("log from a subnormal") << 1.4e-45 << 6.0e38 << 60 << true;
    QTest::newRow("log narrow [0.1, 0.1001]") << 0.1 << 0.1001 << 60 << true;
}

void TestFastAnalysis::fillerCountsAsAddDoes() {
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(int, bins);
    QFETCH(bool, log);
    const Histogram empty(lo, hi, bins, log ? Histogram::Scale::Log10 : Histogram::Scale::Linear);
    std::vector<double> values;
    for (double e : empty.edges())
        for (double v : {e, static_cast<double>(static_cast<float>(e))}) {
            const float f = static_cast<float>(v);
            values.insert(values.end(),
                          {v, std::nextafter(v, -1e300), std::nextafter(v, 1e300), std::nextafter(f, -1e30f),
                           std::nextafter(f, 1e30f), v * (1 + 1e-7), v * (1 - 1e-7), -v});
        }
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 20000; ++i) {
        const double t = u(rng) * 1.2 - 0.1;
        values.push_back(log ? std::pow(10.0, std::log10(empty.lo()) +
                                                  t * (std::log10(empty.hi()) - std::log10(empty.lo())))
                             : empty.lo() + t * (empty.hi() - empty.lo()));
    }
    values.insert(values.end(), {0.0, -0.0, 1e-45, -1e-45, 1e-40, 1e39, -1e39, 3.4e38, std::nan("")});
    Histogram byAdd = empty, byFiller = empty;
    for (double v : values)
        byAdd.add(v);
    {
        HistogramFiller filler(byFiller);
        for (std::size_t first = 0; first < values.size(); first += HistogramFiller::kBlock) {
            const int n =
                static_cast<int>(std::min<std::size_t>(HistogramFiller::kBlock, values.size() - first));
            std::vector<float> approx(static_cast<std::size_t>(n));
            for (int k = 0; k < n; ++k)
                approx[static_cast<std::size_t>(k)] =
                    static_cast<float>(values[first + static_cast<std::size_t>(k)]);
            filler.addBlock<4>(approx.data(), n,
                               [&](int k) { return values[first + static_cast<std::size_t>(k)]; });
        }
    }
    compareHistograms(byFiller, byAdd, "filler vs add");
    QCOMPARE(byFiller.total(), static_cast<std::int64_t>(values.size()));
}

// The per-group tables are made without writing zeros (ZeroedHugePageAllocator): both of its paths
// must still give zeroed rows, a small block reused from the heap (cleared on allocation) and a mapped
// one (fresh pages), and a type whose default is not zero bytes must still be constructed.
// The pass reports its progress slice by slice from the calling thread, at any thread count: the
// values never go backwards and end at 1; one thread shows every slice, two threads (each seeing the
// other's finishes) several. With more threads than cores, finishes that land together may show as
// one step; the end still comes.
void TestFastAnalysis::progressStepsThroughTheSlices() {
    const Shape sh{1024, 1024}; // 16 slices
    const ResolvedSpec plan = resolveSpec(conformanceSpecs().front().spec, sh);
    const Tensor tensor = tensorOf(conformanceValues(elementCount(sh), 3), sh, DType::F32);
    const std::vector<float> x = tensor.toFloatVector();
    BackendTask job;
    job.plan = plan;
    job.values = x;
    const Result ref = CpuReferenceBackend().run(job);
    for (unsigned threads : {1u, 2u, 16u}) {
        std::vector<double> seen;
        AnalysisOptions opt;
        opt.threads = threads;
        opt.progress = [&](double d) { seen.push_back(d); };
        analyze(plan, ref.params, ref.codes, *ValuesView::of(tensor), opt);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QCOMPARE(seen.back(), 1.0);
        const auto steps = std::count_if(seen.begin(), seen.end(), [](double d) { return d > 0 && d < 1; });
        if (threads <= 2) QVERIFY2(steps >= (threads == 1 ? 15 : 2), qPrintable(QString::number(steps)));
    }
}

void TestFastAnalysis::rowTablesStartZeroed() {
    constexpr std::size_t kSmall = 1000, kMapped = (std::size_t{8} << 20) / sizeof(GroupClipping) + 1;
    for (std::size_t n : {kSmall, kMapped}) {
        {
            GroupRows dirty(n); // the same size, so the heap hands its block back next
            for (GroupClipping& g : dirty)
                g.count = g.clippedLow = 7, g.sumSqX = g.maxAbsError = 3.5;
        }
        const GroupRows rows(n);
        std::size_t nonZero = 0;
        for (const GroupClipping& g : rows)
            nonZero += g.count || g.clippedLow || g.clippedHigh || g.flushedToZero || g.clipErrorSq ||
                       g.roundErrorSq || g.sumSqX || g.maxAbsError;
        QCOMPARE(nonZero, std::size_t{0});
        struct Seven {
            int v = 7;
        };
        const std::vector<Seven, ZeroedHugePageAllocator<Seven>> sevens(n);
        QVERIFY(std::all_of(sevens.begin(), sevens.end(), [](const Seven& s) { return s.v == 7; }));
    }
}

// The fast pass finds the widest group slice by slice, groups met out of order (a column's groups
// recur in every row) and slices merged in any order; the oracle scans in group order keeping the
// first strictly wider. Ties, NaN widths (group 0's included) and infinite ones must pick alike.
void TestFastAnalysis::widestGroupAsScanFinds() {
    const double nan = std::numeric_limits<double>::quiet_NaN(),
                 inf = std::numeric_limits<double>::infinity();
    std::mt19937 rng(5);
    for (int trial = 0; trial < 2000; ++trial) {
        const std::size_t n = 1 + rng() % 12;
        std::vector<double> widths(n);
        for (double& w : widths) {
            const unsigned pick = rng() % 8;
            w = pick == 0 ? nan : pick == 1 ? inf : static_cast<double>(rng() % 4);
        }
        auto edgesOf = [&](std::size_t g) { return ClipEdges{-1.0, widths[g] - 1.0, 0.0}; };
        std::size_t scan = 0;
        for (std::size_t g = 1; g < n; ++g)
            if (edgesOf(g).high - edgesOf(g).low > edgesOf(scan).high - edgesOf(scan).low) scan = g;
        // Every group met at least once, some twice, in a shuffled order, over three parts.
        std::vector<std::size_t> met(n);
        std::iota(met.begin(), met.end(), std::size_t{0});
        for (std::size_t g = 0; g < n; g += 3)
            met.push_back(g);
        std::shuffle(met.begin(), met.end(), rng);
        std::vector<WidestGroup> parts(3);
        for (std::size_t i = 0; i < met.size(); ++i)
            parts[rng() % 3].add(static_cast<std::int64_t>(met[i]), edgesOf(met[i]));
        std::shuffle(parts.begin(), parts.end(), rng);
        WidestGroup merged;
        for (const WidestGroup& part : parts)
            merged.merge(part);
        QCOMPARE(merged.result(edgesOf(0)), static_cast<std::int64_t>(scan));
    }
}

QTEST_GUILESS_MAIN(TestFastAnalysis)
#include "tst_fast_analysis.moc"
