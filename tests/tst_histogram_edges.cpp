// The histograms' edges follow from the plan and the params alone (report_schema.md, version 3):
// worked out by hand for integer and minifloat grids, with clipped elements counted beyond them, the
// same in the fast pass, the oracle and the CPU backend's own pass.
#include "analysis/accumulators.h"
#include "analysis/analyzer.h"
#include "analysis/statistics_agreement.h"
#include "cpu/cpu_backend.h"
#include "quant/calibration.h"
#include "quant/reference.h"
#include "quant_test_util.h"

#include <QtTest>
#include <cmath>

using namespace ql;

namespace {

QuantSpec perTensorInt8() {
    QuantSpec spec;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.calibration.method = CalibMethod::Explicit;
    return spec;
}

std::int64_t beyond(const Histogram& h) {
    return h.underflow() + h.overflow();
}

// The error bins of report format 3 for this reach: a power-of-two width, the narrowest with which
// 101 bins reach it each way, an odd count of them centred on zero passing it by less than a bin;
// the |error| bins four to an octave over the 15 octaves below the power of two reaching it.
void checkErrorEdges(const TensorAnalysis& a, double reach) {
    const std::vector<double> e = a.error.edges();
    const double width = e[1] - e[0];
    int exponent = 0;
    QCOMPARE(std::frexp(width, &exponent), 0.5);
    QVERIFY2(101 * width / 2 >= reach && 101 * width / 4 < reach, qPrintable(QString::number(width)));
    QCOMPARE(a.error.binCount() % 2, 1);
    QCOMPARE(a.error.lo(), -a.error.hi());
    QCOMPARE(a.error.hi(), a.error.binCount() * width / 2);
    QVERIFY2(a.error.hi() >= reach && a.error.hi() - width < reach,
             qPrintable(QString::number(a.error.hi())));
    QCOMPARE(a.absErrorLog.scale(), Histogram::Scale::Octaves);
    const double top = std::exp2(std::ceil(std::log2(reach)));
    QCOMPARE(a.absErrorLog.hi(), top);
    QCOMPARE(a.absErrorLog.lo(), top * 0x1p-15);
    QCOMPARE(a.absErrorLog.binCount(), 60);
    QCOMPARE(a.absErrorLog.edges()[1], a.absErrorLog.lo() * 1.25);
}

} // namespace

class TestHistogramEdges : public QObject {
    Q_OBJECT
private slots:
    void integerGridReachesHalfAStep();
    void directedRoundingReachesAWholeStep();
    void minifloatReachesHalfItsTopGap();
    void widestGroupSetsTheEdges();
    void clippedElementsFallBeyondTheEdges();
    void cpuPassCountsAsTheOracle();
};

// int8 per-tensor, scale 0.5: the grid spans [-64, 63.5]; rounding to nearest reaches a quarter
// beyond it, plus 2^-20 of 64 for float rounding.
void TestHistogramEdges::integerGridReachesHalfAStep() {
    const std::vector<float> x{0.1f, -0.3f, 10.2f, -63.9f, 63.7f, 0.0f};
    const ResolvedSpec plan = resolveSpec(perTensorInt8(), {6});
    QuantParams params;
    params.scales = {0.5f};
    const TensorAnalysis a = analyzeReference(plan, params, quantizeReference(plan, params, x), x);
    const double reach = 0.25 + 64.0 * 0x1p-20;
    checkErrorEdges(a, reach);
    QCOMPARE(a.error.hi(), 65 * 0x1p-8); // 65 bins of 2^-7: 0.2539 >= 0.25006
    QCOMPARE(a.values.lo(), -64.0 - reach);
    QCOMPARE(a.values.hi(), 63.5 + reach);
    // Nothing is clipped: every element is in the bins; the exact zero underflows the log bins.
    QCOMPARE(beyond(a.error), 0);
    QCOMPARE(beyond(a.values), 0);
    QCOMPARE(a.absErrorLog.underflow(), 1);
    QCOMPARE(a.absErrorLog.overflow(), 0);
}

// aclnnAscendQuantV3 with floor rounding misses by up to a whole step without clipping.
void TestHistogramEdges::directedRoundingReachesAWholeStep() {
    QuantSpec spec = perTensorInt8();
    spec.preset = Preset::AscendQuant;
    spec.rounding = Rounding::Floor;
    const std::vector<float> x{0.9f, -0.1f, 126.99f};
    const ResolvedSpec plan = resolveSpec(spec, {3});
    QuantParams params;
    params.scales = {1.0f};
    const TensorAnalysis a = analyzeReference(plan, params, quantizeReference(plan, params, x), x);
    const double reach = 1.0 + 128.0 * 0x1p-20;
    checkErrorEdges(a, reach);
    QCOMPARE(a.values.lo(), -128.0 - reach);
    QCOMPARE(a.values.hi(), 127.0 + reach);
    QCOMPARE(beyond(a.error), 0);
}

// TensorRT FP8 E4M3 per tensor, scale 0.5: E4M3's top gap (416 to 448) is 32, so the reach is 8,
// half a gap, beyond ±448 · 0.5.
void TestHistogramEdges::minifloatReachesHalfItsTopGap() {
    QuantSpec spec = perTensorInt8();
    spec.preset = Preset::TensorRT;
    spec.target = Target::Fp8E4M3;
    const std::vector<float> x = qltest::normalValues(64, 3, 50.0f);
    const ResolvedSpec plan = resolveSpec(spec, {64});
    QuantParams params;
    params.scales = {0.5f};
    const TensorAnalysis a = analyzeReference(plan, params, quantizeReference(plan, params, x), x);
    const double reach = 8.0 + 224.0 * 0x1p-20;
    checkErrorEdges(a, reach);
    QVERIFY(std::fabs(a.values.hi() - (224.0 + reach)) <= 1e-12);
    QCOMPARE(a.values.lo(), -a.values.hi());
    QCOMPARE(beyond(a.error), 0);
}

// Per-channel scales: the edges are the widest group's, whichever group holds it.
void TestHistogramEdges::widestGroupSetsTheEdges() {
    QuantSpec spec = perTensorInt8();
    spec.scheme = Scheme::PerChannel;
    spec.axes = {0};
    const std::vector<float> x{0.1f, 0.2f, 1.0f, -3.0f, 0.01f, 0.02f};
    const ResolvedSpec plan = resolveSpec(spec, {3, 2});
    QuantParams params;
    params.scales = {0.01f, 0.04f, 0.001f};
    const TensorAnalysis a = analyzeReference(plan, params, quantizeReference(plan, params, x), x);
    // (The edges come from the grid's ends in float, 127 · 0.04f rounded to float: equal to a part in 1e-7.)
    const double step = static_cast<double>(0.04f);
    const double reach = step / 2 + 128 * step * 0x1p-20;
    auto near = [](double got, double want) { return std::fabs(got - want) <= 1e-7 * std::fabs(want); };
    QVERIFY2(a.error.hi() >= reach && a.error.hi() < reach * 1.1,
             qPrintable(QString::number(a.error.hi(), 'g', 17)));
    QVERIFY(near(a.values.lo(), -128 * step - reach));
    QVERIFY(near(a.values.hi(), 127 * step + reach));
}

// Outliers far beyond a percentile-calibrated grid are clipped: counted beyond the error and value
// edges, one each, in the fast pass as in the oracle. Only clipped elements lie beyond the error
// edges (those clipped by less than a bin past the largest reach still fall in the outer bins).
void TestHistogramEdges::clippedElementsFallBeyondTheEdges() {
    QuantSpec spec = perTensorInt8();
    spec.calibration.method = CalibMethod::Percentile;
    spec.calibration.percentile = 99.0;
    std::vector<float> x = qltest::normalValues(1 << 14, 7, 1.0f);
    const std::vector<std::size_t> outliers{5, 700, 9000, 16000};
    for (std::size_t i : outliers)
        x[i] = (i % 2 ? -1.0f : 1.0f) * 100.0f;
    const ResolvedSpec plan = resolveSpec(spec, {static_cast<std::int64_t>(x.size())});
    const QuantParams params = calibrate(plan, x);
    const Codes codes = quantizeReference(plan, params, x);
    const TensorAnalysis oracle = analyzeReference(plan, params, codes, x);
    const TensorAnalysis fast = analyze(plan, params, codes, x);
    const GroupClipping clipped = oracle.clipping.total();
    QVERIFY(clipped.clippedLow + clipped.clippedHigh >= static_cast<std::int64_t>(outliers.size()));
    for (const TensorAnalysis* a : {&oracle, &fast}) {
        // Every element beyond the edges is clipped, the outliers among them.
        QVERIFY(beyond(a->error) <= clipped.clippedLow + clipped.clippedHigh);
        QVERIFY(beyond(a->error) >= static_cast<std::int64_t>(outliers.size()));
        QCOMPARE(a->error.total(), static_cast<std::int64_t>(x.size()));
        QVERIFY(a->values.overflow() >= 2 && a->values.underflow() >= 2);
        QVERIFY(a->absErrorLog.overflow() <= clipped.clippedLow + clipped.clippedHigh);
        QVERIFY(a->absErrorLog.overflow() >= static_cast<std::int64_t>(outliers.size()));
    }
    QCOMPARE(fast.error.counts(), oracle.error.counts());
    QCOMPARE(fast.values.counts(), oracle.values.counts());
    QCOMPARE(fast.absErrorLog.counts(), oracle.absErrorLog.counts());
}

// The cpu backend counts the histograms in its quantize pass: per-channel absmax (a read for the
// params, then one for codes and statistics), MX blocks and a calibration search, against the oracle.
void TestHistogramEdges::cpuPassCountsAsTheOracle() {
    const Shape shape{64, 512};
    const std::vector<float> x = qltest::normalValues(64 * 512, 11, 0.02f);
    QuantSpec absmax;
    QuantSpec mx;
    mx.preset = Preset::MX;
    mx.target = Target::Fp4E2M1;
    mx.scheme = Scheme::Block;
    mx.axes = {1};
    mx.block = {32};
    QuantSpec mse;
    mse.calibration.method = CalibMethod::Mse;
    for (const QuantSpec& spec : {absmax, mx, mse}) {
        const ResolvedSpec plan = resolveSpec(spec, shape);
        BackendTask job;
        job.plan = plan;
        job.values = x;
        job.statistics = StatisticsRequest{};
        job.statistics->options.threads = 2;
        const Result r = CpuBackend(2).run(job, {});
        QVERIFY(r.statistics);
        const TensorAccumulators want = accumulateReference(plan, r.params, r.codes, x, *job.statistics);
        const std::vector<std::string> differences =
            statisticsDifferences(r.statistics->analysis, want.analysis);
        QVERIFY2(differences.empty(), differences.empty() ? "" : differences.front().c_str());
        QVERIFY(r.statistics->analysis.error.hi() > 0);
    }
}

QTEST_GUILESS_MAIN(TestHistogramEdges)
#include "tst_histogram_edges.moc"
