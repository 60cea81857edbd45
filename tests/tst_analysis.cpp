// Error metrics, histograms, code statistics and clipping against NumPy and hand-worked cases.
#include "analysis/analyzer.h"
#include "analysis/comparison.h"
#include "analysis/error_stats.h"
#include "analysis/histogram.h"
#include "base/error.h"
#include "quant/reference.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>
#include <random>

using namespace ql;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool havePythonNumpy() {
    QProcess p;
    p.start(QStringLiteral(QUANTLENS_PYTHON), {QStringLiteral("-c"), QStringLiteral("import numpy")});
    return p.waitForFinished(60000) && p.exitCode() == 0;
}

QString writeF32(const QTemporaryDir& dir, const char* name, const std::vector<float>& v) {
    QString path = dir.filePath(QString::fromLatin1(name));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(reinterpret_cast<const char*>(v.data()),
            static_cast<qint64>(v.size()) * static_cast<qint64>(sizeof(float)));
    return path;
}

QJsonObject numpy(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(QUANTLENS_PYTHON),
            QStringList{QStringLiteral(QUANTLENS_TEST_SCRIPTS "/analysis_metrics.py")} + args);
    if (!p.waitForFinished(120000) || p.exitCode() != 0)
        qFatal("analysis_metrics.py failed: %s", p.readAllStandardError().constData());
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

// The oracle writes ±inf as strings; everything else is a number.
double oracleValue(const QJsonValue& v) {
    if (v.isString()) return v.toString() == QLatin1String("inf") ? HUGE_VAL : -HUGE_VAL;
    return v.toDouble();
}

void compareClose(double actual, double expected, const char* what) {
    if (std::isinf(expected)) {
        QVERIFY2(actual == expected, what);
        return;
    }
    const double tol = 1e-9 * std::max(1.0, std::fabs(expected));
    QVERIFY2(std::fabs(actual - expected) <= tol, qPrintable(QStringLiteral("%1: %2 vs numpy %3")
                                                                 .arg(QLatin1String(what))
                                                                 .arg(actual, 0, 'g', 17)
                                                                 .arg(expected, 0, 'g', 17)));
}

std::vector<float> randomVector(std::size_t n, unsigned seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v)
        x = d(rng);
    return v;
}

// A reconstruction near x: an 8-bit-like rounding on a grid of `step`.
std::vector<float> roundedCopy(const std::vector<float>& x, float step) {
    std::vector<float> r(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        r[i] = std::isfinite(x[i]) ? std::nearbyint(x[i] / step) * step : x[i];
    return r;
}

} // namespace

class TestAnalysis : public QObject {
    Q_OBJECT
private slots:
    void metricsAgainstNumpy_data();
    void metricsAgainstNumpy();
    void emptyTensorIsUndefined();
    void mergeEqualsWhole();
    void histogramAgainstNumpy();
    void histogramMerge();
    void codeStatsEntropy();
    void analyzeHandWorked();
    void clippingDirectedRounding();
    void fpFlushToZero();
    void mismatchMapCells();
    void valueHistogramOfFiniteRange();
};

void TestAnalysis::metricsAgainstNumpy_data() {
    QTest::addColumn<std::vector<float>>("x");
    QTest::addColumn<std::vector<float>>("xhat");
    const auto r = randomVector(10000, 1);
    QTest::addRow("random/int8-like") << r << roundedCopy(r, 0.02f);
    QTest::addRow("random/exact") << r << r;
    QTest::addRow("constant") << std::vector<float>(64, 0.75f) << std::vector<float>(64, 0.7480315f);
    QTest::addRow("all-zero/exact") << std::vector<float>(32, 0.0f) << std::vector<float>(32, 0.0f);
    QTest::addRow("all-zero/with-error") << std::vector<float>(4, 0.0f) << std::vector<float>{0, 0.5f, 0, -1};
    auto withNan = randomVector(200, 2);
    withNan[3] = kNaN;
    withNan[50] = kInf;
    withNan[51] = -kInf;
    auto withNanHat = roundedCopy(withNan, 0.1f);
    withNanHat[60] = kNaN; // a non-finite reconstruction of a finite value
    QTest::addRow("nan-and-inf") << withNan << withNanHat;
    QTest::addRow("zeros-inside") << std::vector<float>{0, 1, 0, -2, 3}
                                  << std::vector<float>{0, 1.0005f, 1e-6f, -2, 3.1f};
    QTest::addRow("one-element") << std::vector<float>{2.0f} << std::vector<float>{1.5f};
}

void TestAnalysis::metricsAgainstNumpy() {
    QFETCH(std::vector<float>, x);
    QFETCH(std::vector<float>, xhat);
    if (!havePythonNumpy()) QSKIP("python3 with NumPy not found");
    QTemporaryDir dir;
    const QJsonObject o =
        numpy({QStringLiteral("metrics"), writeF32(dir, "x.f32", x), writeF32(dir, "xh.f32", xhat)});
    ErrorStats s;
    s.add(x, xhat);
    QCOMPARE(s.count(), o[QLatin1String("count")].toInteger());
    QCOMPARE(s.nanCount(), o[QLatin1String("nan_count")].toInteger());
    QCOMPARE(s.infCount(), o[QLatin1String("inf_count")].toInteger());
    QCOMPARE(s.finiteCount(), o[QLatin1String("finite")].toInteger());
    compareClose(s.mse(), oracleValue(o[QLatin1String("mse")]), "mse");
    compareClose(s.rmse(), oracleValue(o[QLatin1String("rmse")]), "rmse");
    compareClose(s.maxAbsError(), oracleValue(o[QLatin1String("max_abs_error")]), "max_abs_error");
    QCOMPARE(s.worstIndex(), o[QLatin1String("worst_index")].toInteger());
    compareClose(s.meanAbsError(), oracleValue(o[QLatin1String("mean_abs_error")]), "mean_abs_error");
    compareClose(s.sqnrDb(), oracleValue(o[QLatin1String("sqnr_db")]), "sqnr_db");
    compareClose(s.relError(), oracleValue(o[QLatin1String("rel_error")]), "rel_error");
    compareClose(s.cosine(), oracleValue(o[QLatin1String("cosine")]), "cosine");
    compareClose(s.ratioOver1e3(), oracleValue(o[QLatin1String("ratio_1e3")]), "ratio_1e3");
    compareClose(s.ratioOver5e3(), oracleValue(o[QLatin1String("ratio_5e3")]), "ratio_5e3");
}

void TestAnalysis::emptyTensorIsUndefined() {
    ErrorStats s;
    s.add({}, {});
    QCOMPARE(s.count(), 0);
    QVERIFY(std::isnan(s.mse()));
    QVERIFY(std::isnan(s.sqnrDb()));
    QVERIFY(std::isnan(s.cosine()));
    QCOMPARE(s.worstIndex(), -1);
    // Only NaNs: counted, and nothing measurable.
    const std::vector<float> nans(3, kNaN);
    s.add(nans, nans);
    QCOMPARE(s.nanCount(), 3);
    QVERIFY(std::isnan(s.rmse()));
}

void TestAnalysis::mergeEqualsWhole() {
    const auto x = randomVector(5000, 3);
    const auto xh = roundedCopy(x, 0.05f);
    ErrorStats whole;
    whole.add(x, xh);
    // Uneven chunks merged in reverse order.
    std::vector<ErrorStats> parts;
    for (std::size_t begin = 0; begin < x.size(); begin += 777) {
        const std::size_t n = std::min<std::size_t>(777, x.size() - begin);
        ErrorStats p;
        p.add(std::span(x).subspan(begin, n), std::span(xh).subspan(begin, n),
              static_cast<std::int64_t>(begin));
        parts.push_back(p);
    }
    ErrorStats merged;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
        merged.merge(*it);
    QCOMPARE(merged.count(), whole.count());
    QCOMPARE(merged.worstIndex(), whole.worstIndex());
    QCOMPARE(merged.maxAbsError(), whole.maxAbsError());
    QVERIFY(std::fabs(merged.mse() - whole.mse()) <= 1e-12 * whole.mse());
    QVERIFY(std::fabs(merged.cosine() - whole.cosine()) <= 1e-12);
    QCOMPARE(merged.ratioOver1e3(), whole.ratioOver1e3());
}

void TestAnalysis::histogramAgainstNumpy() {
    if (!havePythonNumpy()) QSKIP("python3 with NumPy not found");
    auto v = randomVector(20000, 4);
    v.push_back(-1.0f); // exactly on edges
    v.push_back(0.0f);
    v.push_back(1.0f);
    QTemporaryDir dir;
    const QJsonObject o = numpy({QStringLiteral("hist"), writeF32(dir, "v.f32", v), QStringLiteral("-1"),
                                 QStringLiteral("1"), QStringLiteral("20")});
    Histogram h(-1, 1, 20);
    for (float x : v)
        h.add(x);
    const auto expected = o[QLatin1String("counts")].toArray();
    QCOMPARE(h.binCount(), expected.size());
    for (int i = 0; i < h.binCount(); ++i)
        QCOMPARE(h.counts()[i], expected[i].toInteger());
    QCOMPARE(h.total(), static_cast<std::int64_t>(v.size()));
}

void TestAnalysis::histogramMerge() {
    Histogram a(0, 10, 10), b(0, 10, 10);
    a.add(1.5);
    a.add(-3);
    b.add(1.2);
    b.add(11);
    b.add(std::nan(""));
    a.merge(b);
    QCOMPARE(a.counts()[1], 2);
    QCOMPARE(a.underflow(), 1);
    QCOMPARE(a.overflow(), 1);
    QCOMPARE(a.nanCount(), 1);
    QVERIFY_THROWS_EXCEPTION(QuantError, a.merge(Histogram(0, 5, 10)));
    // Constant data: a degenerate range still gets one bin holding everything.
    Histogram c(2.0, 2.0, 8);
    c.add(2.0);
    QCOMPARE(c.underflow() + c.overflow(), 0);
    Histogram log(1e-3, 1e1, 4, Histogram::Scale::Log10);
    log.add(0.0);  // zero error: underflow on a log axis
    log.add(0.05); // 10^-1.3 -> bin 1
    QCOMPARE(log.underflow(), 1);
    QCOMPARE(log.counts()[1], 1);
    QCOMPARE(log.edges()[3], 1.0);
}

void TestAnalysis::codeStatsEntropy() {
    CodeStats c(Target::Int8);
    for (int code : {0, 0, 2, 2, 127, -128})
        c.add(code);
    QCOMPARE(c.codesUsed(), 4);
    QCOMPARE(c.possibleCodes(), 256.0);
    // p = 1/3, 1/3, 1/6, 1/6
    const double h = -(2 * (1.0 / 3) * std::log2(1.0 / 3) + 2 * (1.0 / 6) * std::log2(1.0 / 6));
    QVERIFY(std::fabs(c.entropyBits() - h) < 1e-12);
    CodeStats one(Target::UInt4);
    one.add(5, 10);
    QCOMPARE(one.entropyBits(), 0.0);
    QCOMPARE(one.possibleCodes(), 16.0);
    CodeStats wide(Target::Int32);
    wide.add(1 << 30);
    wide.add(-5);
    CodeStats other(Target::Int32);
    other.add(-5);
    wide.merge(other);
    QCOMPARE(wide.codesUsed(), 2);
    QCOMPARE(wide.counts().front().second, 2);
    QCOMPARE(CodeStats(Target::Int8).entropyBits(), 0.0);
}

void TestAnalysis::analyzeHandWorked() {
    // torch qint8, s = 1: codes [0,2,2,0,127,-128] (spec V-Q1); 200 and -200 clip.
    QuantSpec spec;
    spec.scheme = Scheme::PerTensor;
    spec.calibration.method = CalibMethod::Explicit;
    const std::vector<float> x{0.5f, 1.5f, 2.5f, -0.5f, 200.0f, -200.0f};
    const ResolvedSpec plan = resolveSpec(spec, {6});
    QuantParams params;
    params.scales = {1.0f};
    const Codes codes = quantizeReference(plan, params, x);
    const TensorAnalysis a = analyze(plan, params, codes, x);
    QCOMPARE(a.stats.maxAbsError(), 73.0);
    QCOMPARE(a.stats.worstIndex(), 4);
    const GroupClipping clip = a.clipping.total();
    QCOMPARE(clip.clippedHigh, 1);
    QCOMPARE(clip.clippedLow, 1);
    QCOMPARE(clip.clipErrorSq, 73.0 * 73.0 + 72.0 * 72.0);
    QCOMPARE(clip.roundErrorSq, 4 * 0.25);
    QCOMPARE(clip.clippedFraction(), 2.0 / 6.0);
    QCOMPARE(a.codes.codesUsed(), 4);
    QCOMPARE(a.gridEdges.low, -128.0);
    QCOMPARE(a.gridEdges.high, 127.0);
    QCOMPARE(a.grid.size(), std::size_t{256});
    QCOMPARE(a.values.total(), 6);
    QCOMPARE(a.error.total(), 6);
    QCOMPARE(a.absErrorLog.underflow(), 0); // no element is exact here
    QCOMPARE(a.scales.total(), 1);
}

void TestAnalysis::clippingDirectedRounding() {
    // Floor rounding can miss by a whole step without clipping (aclnnAscendQuantV3 roundMode "floor").
    QuantSpec spec;
    spec.preset = Preset::AscendQuant;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.rounding = Rounding::Floor;
    spec.calibration.method = CalibMethod::Explicit;
    const std::vector<float> x{127.9f, 128.9f, -128.0f, -129.5f};
    const ResolvedSpec plan = resolveSpec(spec, {4});
    QuantParams params;
    params.scales = {1.0f};
    const TensorAnalysis a = analyze(plan, params, quantizeReference(plan, params, x), x);
    QCOMPARE(a.clipping.total().clippedHigh, 1); // 128.9 > 127 + 1
    QCOMPARE(a.clipping.total().clippedLow, 1);  // -129.5 < -128 - 1
}

void TestAnalysis::fpFlushToZero() {
    QuantSpec spec;
    spec.preset = Preset::TensorRT;
    spec.target = Target::Fp8E4M3;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.calibration.method = CalibMethod::Explicit;
    // 2^-11 is below half the smallest E4M3 subnormal (2^-9 / 2): it flushes to zero; 500 saturates.
    const std::vector<float> x{std::ldexp(1.0f, -11), 1.0f, 500.0f, 0.0f};
    const ResolvedSpec plan = resolveSpec(spec, {4});
    QuantParams params;
    params.scales = {1.0f};
    const TensorAnalysis a = analyze(plan, params, quantizeReference(plan, params, x), x);
    QCOMPARE(a.clipping.total().flushedToZero, 1);
    QCOMPARE(a.clipping.total().clippedHigh, 1);
    QCOMPARE(a.gridEdges.high, 448.0);
}

void TestAnalysis::mismatchMapCells() {
    // A [4, 6] tensor on a 2 x 3 grid: each cell covers 2 x 2 elements.
    Codes a(Target::Int8, 24), b(Target::Int8, 24);
    b.set(0, 1);     // row 0, col 0 -> cell (0, 0)
    b.set(6 + 1, 1); // row 1, col 1 -> cell (0, 0)
    b.set(23, 5);    // row 3, col 5 -> cell (1, 2)
    const auto map = mismatchMap(a, b, {4, 6}, 3);
    QCOMPARE(map.rows, 3); // min(4, 3)
    QCOMPARE(map.cols, 3); // min(6, 3)
    double total = 0;
    for (double c : map.counts)
        total += c;
    QCOMPARE(total, 3.0);
    QCOMPARE(map.counts[0], 2.0);
    QCOMPARE(map.counts[8], 1.0);
    QVERIFY(mismatchMap(a, a, {4, 6}).counts.empty());
}

void TestAnalysis::valueHistogramOfFiniteRange() {
    const std::vector<float> v{-1.0f, 3.0f, kNaN, kInf, 1.0f};
    const Histogram h = valueHistogram(v, 4);
    QCOMPARE(h.lo(), -1.0);
    QCOMPARE(h.hi(), 3.0);
    QCOMPARE(h.nanCount(), std::int64_t(1));
    QCOMPARE(h.overflow(), std::int64_t(1)); // +Inf lies above the finite range
    QCOMPARE(h.total() - h.nanCount() - h.overflow(), std::int64_t(3));
}

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
