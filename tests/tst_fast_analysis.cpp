// The fast analysis (analyze: values read in place, slices on every core) against the scalar
// oracle (analyzeReference) over the conformance grid of presets, layouts and targets, in f32,
// bf16 and f16: counts, extremes, histograms and grids exactly equal; floating sums within 1e-10
// relative (they are added in another order); and the same bits whatever the thread count and
// whichever ISA build of the pass runs (AVX-512, AVX2 or the baseline).
#include "accumulator_checks.h"
#include "analysis/analyzer.h"
#include "analysis/clip_edge_rule.h"
#include "analysis/error_cells.h"
#include "analysis/histogram_filler.h"
#include "backend_test_util.h"
#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "cpu/cpu_reference_backend.h"
#include "quant/reference.h"
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

// Large enough for several slices, odd enough for short rows and groups. The last is large enough for
// the pass to count values and byte codes in pairs (a million elements and more), in f32 only.
const std::vector<Shape>& analysisShapes() {
    static const std::vector<Shape> s{{64, 256}, {33, 129}, {3, 5, 640}, {300, 1031}, {70001}, {1024, 1031}};
    return s;
}
bool pairedShape(std::size_t shape) {
    return shape + 1 == analysisShapes().size();
}

} // namespace

class TestFastAnalysis : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void matchesOracle_data();
    void matchesOracle();
    void logBinsAgreeWithLog10();
    void octaveBinsAgreeWithEdges();
    void fillerCountsAsAddDoes_data();
    void fillerCountsAsAddDoes();
    void errorCellsCountAsAddDoes();
    void rowTablesStartZeroed();
    void widestGroupAsScanFinds();
    void worstElementIsTheFirstLargest();
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
            for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
                if (pairedShape(sh) && dt != DType::F32) continue;
                // (the large rows by spec, so each part takes half of them)
                if (inThisPart(pairedShape(sh) ? static_cast<long>(s) : row++))
                    QTest::addRow("%s/%s/%s", specs[s].name, toString(analysisShapes()[sh]).c_str(),
                                  std::string(nameOf(dt)).c_str())
                        << static_cast<int>(s) << static_cast<int>(sh) << static_cast<int>(dt);
            }
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
    // Error bins the cells cannot count for (an even count puts an edge at zero): the pass's other
    // way, three block fillers, against the oracle on the same bins.
    AnalysisOptions evenBins;
    evenBins.errorBins = 200;
    const TensorAnalysis oracleEven = analyzeReference(plan, ref.params, ref.codes, x, evenBins);
    QVERIFY(!ErrorCells::fits(oracleEven.error, oracleEven.absErrorLog));
    compareAnalyses(analyze(plan, ref.params, ref.codes, view, evenBins), oracleEven, false);
    if (pairedShape(static_cast<std::size_t>(shape))) { // too many value bins for a table of pairs
        AnalysisOptions manyBins;
        manyBins.valueBins = 2048;
        compareAnalyses(analyze(plan, ref.params, ref.codes, view, manyBins),
                        analyzeReference(plan, ref.params, ref.codes, x, manyBins), false);
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

// Octave bins from the bits (BinRule::octaveBinOf) against their edges compared as numbers: a value
// on an edge in the bin above it, the top edge closed, below lo underflow; one, four and 64 bins to an
// octave.
void TestFastAnalysis::octaveBinsAgreeWithEdges() {
    for (int perOctave : {4, 1, 64}) {
        const Histogram empty = Histogram::octaves(-20, 12, perOctave);
        const std::vector<double> edges = empty.edges();
        std::vector<double> values;
        for (double e : edges)
            values.insert(values.end(), {e, std::nextafter(e, 0.0), std::nextafter(e, 1e300)});
        for (double v = 0x1p-21; v < 0x1p-7; v *= 1.0007)
            values.push_back(v);
        for (double v : values) {
            Histogram one = empty;
            one.add(v);
            const auto& c = one.counts();
            const auto bin = static_cast<std::size_t>(std::find(c.begin(), c.end(), 1) - c.begin());
            if (v < edges.front() || v > edges.back()) {
                QCOMPARE(bin, c.size());
                continue;
            }
            QVERIFY2(
                bin < c.size() && v >= edges[bin] && (v < edges[bin + 1] || bin + 1 == c.size()),
                qPrintable(QStringLiteral("%1 in bin %2 of %3").arg(v, 0, 'g', 17).arg(bin).arg(perOctave)));
        }
    }
}

// The block filler (float lanes: a float position trusted away from the edges) against
// Histogram::add, value for value, on every kind of bins (octave and log10 ones all through add()) and
// on ranges that stress its bounds: edges and their float neighbours, values a rounding away from them,
// zeros, negatives, subnormals, overflow and NaN. A value that is no float comes as NaN, as the pass passes
// it.
void TestFastAnalysis::fillerCountsAsAddDoes_data() {
    QTest::addColumn<QString>("scale");
    QTest::addColumn<double>("lo"); // aligned: the first edge in half widths
    QTest::addColumn<double>("hi"); // aligned: the width's exponent
    QTest::addColumn<int>("bins");
    QTest::addColumn<bool>("vectorised");
    QTest::newRow("error ±0.02, 101 bins") << QStringLiteral("linear") << -0.0223 << 0.0223 << 101 << true;
    QTest::newRow("values [-5.3, 4.9], 256 bins") << QStringLiteral("linear") << -5.3 << 4.9 << 256 << true;
    QTest::newRow("far from zero [1000, 1001]")
        << QStringLiteral("linear") << 1000.0 << 1001.0 << 256 << false;
    QTest::newRow("tiny [1e-30, 3e-30]") << QStringLiteral("linear") << 1e-30 << 3e-30 << 64 << true;
    QTest::newRow("float's whole range") << QStringLiteral("linear") << -3.4e38 << 3.4e38 << 101 << true;
    QTest::newRow("one value") << QStringLiteral("linear") << 0.25 << 0.25 << 256 << true;
    QTest::newRow("aligned error, 65 bins of 2^-7")
        << QStringLiteral("aligned") << -65.0 << -7.0 << 65 << true;
    QTest::newRow("aligned, an edge at zero") << QStringLiteral("aligned") << -64.0 << -3.0 << 64 << true;
    QTest::newRow("aligned, bins of 1024") << QStringLiteral("aligned") << -10.0 << 10.0 << 10 << true;
    QTest::newRow("aligned, off zero") << QStringLiteral("aligned") << 2001.0 << -12.0 << 256 << true;
    QTest::newRow("octaves [2^-16, 2^-1], 4 each")
        << QStringLiteral("octaves") << 0x1p-16 << 0x1p-1 << 60 << false;
    QTest::newRow("log10 |error| [3.7e-9, 0.42]") << QStringLiteral("log10") << 3.7e-9 << 0.42 << 60 << false;
}

void TestFastAnalysis::fillerCountsAsAddDoes() {
    QFETCH(QString, scale);
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(int, bins);
    QFETCH(bool, vectorised);
    const Histogram empty =
        scale == u"octaves" ? *Histogram::octavesOver(lo, hi, bins)
        : scale == u"aligned"
            ? Histogram::alignedLinear(static_cast<std::int64_t>(lo), static_cast<int>(hi), bins)
            : Histogram(lo, hi, bins, scale == u"log10" ? Histogram::Scale::Log10 : Histogram::Scale::Linear);
    const bool log = empty.scale() != Histogram::Scale::Linear;
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
        const double v = log ? std::pow(10.0, std::log10(empty.lo()) +
                                                  t * (std::log10(empty.hi()) - std::log10(empty.lo())))
                             : empty.lo() + t * (empty.hi() - empty.lo());
        values.push_back(i % 2 ? static_cast<float>(v) : v); // floats, as the pass mostly has
    }
    values.insert(values.end(), {0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1e39, -1e39, 3.4e38, std::nan("")});
    Histogram byAdd = empty, byFiller = empty;
    for (double v : values)
        byAdd.add(v);
    {
        HistogramFiller filler(byFiller);
        QCOMPARE(filler.vectorised(), vectorised);
        for (std::size_t first = 0; first < values.size(); first += HistogramFiller::kBlock) {
            const int n =
                static_cast<int>(std::min<std::size_t>(HistogramFiller::kBlock, values.size() - first));
            std::vector<float> asFloat(static_cast<std::size_t>(n));
            for (int k = 0; k < n; ++k) {
                const double v = values[first + static_cast<std::size_t>(k)];
                const auto f = static_cast<float>(v);
                asFloat[static_cast<std::size_t>(k)] =
                    static_cast<double>(f) == v ? f : std::numeric_limits<float>::quiet_NaN();
            }
            filler.addBlock<4>(asFloat.data(), n,
                               [&](int k) { return values[first + static_cast<std::size_t>(k)]; });
        }
    }
    compareHistograms(byFiller, byAdd, "filler vs add");
    QCOMPARE(byFiller.total(), static_cast<std::int64_t>(values.size()));
}

// Both error histograms counted through one cell per error (ErrorCells) against Histogram::add:
// every edge of both with its float neighbours and its negative, differences with few bits (as x − x̂
// has), zero and its negative, values beyond both ends and inexact differences passed as NaN.
void TestFastAnalysis::errorCellsCountAsAddDoes() {
    Histogram error = Histogram::alignedLinear(-65, -7, 65), absError = Histogram::octaves(-16, 15, 4);
    QVERIFY(ErrorCells::fits(error, absError));
    QVERIFY(!ErrorCells::fits(Histogram::alignedLinear(-64, -7, 64), absError)); // an edge at zero
    QVERIFY(!ErrorCells::fits(Histogram(-0.3, 0.3, 101), absError));
    std::vector<double> values;
    for (const Histogram* h : {&error, &absError})
        for (double e : h->edges())
            for (double v : {e, -e}) {
                const auto f = static_cast<float>(v);
                values.insert(values.end(), {v, std::nextafter(f, -1.0f), std::nextafter(f, 1.0f)});
            }
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-0.3, 0.3);
    for (int i = 0; i < 40000; ++i) {
        const double v = u(rng);
        const double bits = std::ldexp(1.0, 8 + i % 20); // a difference of floats has few bits
        values.push_back(i % 3 ? std::round(v * bits) / bits : static_cast<float>(v));
    }
    values.insert(values.end(), {0.0, -0.0, 1e-45, -1e-45, 1e-40, 2.0, -2.0, 1e30, -1e30});
    values.insert(values.end(), {0.1 + 1e-12, -0.2 - 1e-13}); // no floats: passed as NaN
    Histogram wantError = error, wantAbs = absError;
    for (double v : values) {
        wantError.add(v);
        wantAbs.add(std::fabs(v));
    }
    using F = FloatLanes<4>::F;
    using I = FloatLanes<4>::I;
    {
        const ErrorCells::Layout layout(error, absError);
        ErrorCells cells(error, absError, layout);
        for (std::size_t first = 0; first < values.size(); first += HistogramFiller::kBlock) {
            const int n =
                static_cast<int>(std::min<std::size_t>(HistogramFiller::kBlock, values.size() - first));
            auto exact = [&](int k) { return values[first + static_cast<std::size_t>(k)]; };
            std::vector<std::int32_t> blockSlots(HistogramFiller::kBlock);
            int k = 0;
            for (; k + 4 <= n; k += 4) {
                F e;
                for (int l = 0; l < 4; ++l) {
                    const double v = exact(k + l);
                    e[l] = static_cast<double>(static_cast<float>(v)) == v
                               ? static_cast<float>(v)
                               : std::numeric_limits<float>::quiet_NaN();
                }
                I slow;
                const I slot = cells.slotsOf<F, I>(e, slow);
                for (int l = 0; l < 4; ++l)
                    blockSlots[static_cast<std::size_t>(k) + static_cast<std::size_t>(l)] = slot[l];
            }
            for (; k < n; ++k)
                blockSlots[static_cast<std::size_t>(k)] = cells.slowSlot();
            const HistogramFiller::Counter c = cells.startBlock(n);
            for (k = 0; k < n; ++k)
                if (blockSlots[static_cast<std::size_t>(k)] != cells.slowSlot())
                    c.add(0, blockSlots[static_cast<std::size_t>(k)]);
            cells.addSlow(blockSlots.data(), n, exact);
        }
    }
    compareHistograms(error, wantError, "error cells vs add");
    compareHistograms(absError, wantAbs, "|error| cells vs add");
    QCOMPARE(error.total(), static_cast<std::int64_t>(values.size()));
}

// The per-group tables are made without writing zeros (ZeroedHugePageAllocator): both of its paths
// must still give zeroed rows, a small block reused from the heap (cleared on allocation) and a mapped
// one (fresh pages), and a type whose default is not zero bytes must still be constructed.
// The pass reports its progress slice by slice from the calling thread, at any thread count: the
// values never go backwards and end at 1; one thread shows every slice. With more threads the steps
// shown depend on the scheduler: on a busy machine another worker may finish every slice before the
// calling thread takes one, and then only the end shows.
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
        if (threads == 1) QVERIFY2(steps >= 15, qPrintable(QString::number(steps)));
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

// The worst element is the first with the largest |error|, as the oracle finds it: ties within a block
// in other lanes, an equal error later in the same lane (not larger: it must not move), and elements
// past the clip edges in some blocks (the general loop) but not others. A value exactly on the top
// clip edge (127.5 at scale 1) is rounded, not clipped, and the next float up is clipped: a block
// holding either is told apart from one within its edges exactly as the loop tells them apart.
void TestFastAnalysis::worstElementIsTheFirstLargest() {
    QuantSpec spec;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.calibration.method = CalibMethod::Explicit;
    const std::int64_t n = 6000; // (the fast pass takes 4096 elements and more)
    const ResolvedSpec plan = resolveSpec(spec, {n});
    QuantParams p;
    p.scales = {1.0f};
    for (bool clipping : {false, true}) {
        std::vector<float> x(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) // errors of 0.25 everywhere
            x[static_cast<std::size_t>(i)] = static_cast<float>(i % 200 - 100) + 0.25f;
        for (std::int64_t i : {701, 702, 1302, 2601}) // 0.375: ties in two lanes, then an equal one
            x[static_cast<std::size_t>(i)] += 0.125f;
        x[3100] = 7.5f; // 0.5, the largest, its tie in the same lane after it
        x[3996] = -9.5f;
        x[4500] = 127.5f; // on the edge: an error of 0.5 after 3100's
        if (clipping) x[4700] = std::nextafter(127.5f, 200.0f);
        if (clipping) // clipped: errors beyond every rounding error, the first of them the worst
            for (std::int64_t i : {1500, 1900, 2050})
                x[static_cast<std::size_t>(i)] = i == 1500 ? 300.0f : -300.0f + 0.125f;
        const Codes codes = quantizeReference(plan, p, x);
        const TensorAnalysis oracle = analyzeReference(plan, p, codes, x);
        QCOMPARE(oracle.stats.worstIndex(), clipping ? std::int64_t{1500} : std::int64_t{3100});
        const Tensor t = tensorOf(x, {n}, DType::F32);
        for (AnalysisIsa isa : {AnalysisIsa::Avx512, AnalysisIsa::Avx2, AnalysisIsa::Baseline}) {
            if (analysisIsa(isa) != isa) continue;
            AnalysisOptions opt;
            opt.isa = isa;
            const TensorAnalysis fast = analyze(plan, p, codes, *ValuesView::of(t), opt);
            QCOMPARE(fast.stats.worstIndex(), oracle.stats.worstIndex());
            QCOMPARE(fast.stats.maxAbsError(), oracle.stats.maxAbsError());
            compareAnalyses(fast, oracle, false);
        }
    }
}

QTEST_GUILESS_MAIN(TestFastAnalysis)
#include "tst_fast_analysis.moc"
