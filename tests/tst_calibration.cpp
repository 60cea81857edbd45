// Calibration methods: absmax, min-max, percentile, MSE search, entropy (KL); zero ranges; NaN/Inf.
#include "quant/calibration.h"
#include "quant/calibration_search.h"
#include "quant_test_util.h"

#include <QTest>
#include <cmath>
#include <limits>
#include <random>

using namespace ql;

namespace {

QuantSpec calibrated(Preset p, Target t, Scheme s, std::vector<int> axes, bool symmetric, CalibMethod m) {
    auto spec = qltest::spec(p, t, s, std::move(axes), symmetric);
    spec.calibration.method = m;
    return spec;
}

double mseOf(const ResolvedSpec& plan, const QuantParams& p, const std::vector<float>& x) {
    const auto back = dequantizeReference(plan, p, quantizeReference(plan, p, x));
    double e = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        e += (double(x[i]) - back[i]) * (double(x[i]) - back[i]);
    return e / double(x.size());
}

std::vector<float> gaussianWithOutliers(int n) {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x)
        v = normal(rng);
    x[7] = 40.0f;
    x[99] = -35.0f;
    return x;
}

} // namespace

class TestCalibration : public QObject {
    Q_OBJECT
private slots:
    void absmaxPerChannel();
    void absmaxMultiplyConventions();
    void minMaxAsymmetric();
    void zeroRangeNeverDividesByZero();
    void subnormalRangeGetsANormalStep();
    void nonFiniteValuesAreIgnored();
    void percentile();
    void mseBeatsAbsmaxWithOutliers();
    void mseSearchTakesTheLeastScore_data();
    void mseSearchTakesTheLeastScore();
    void entropyClipsOutliers();
    void explicitAndInvalidRequests();
};

void TestCalibration::absmaxPerChannel() {
    const auto plan = resolveSpec(
        calibrated(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}, true, CalibMethod::AbsMax), {2, 3});
    const auto p = calibrate(plan, std::vector<float>{1, -2.54f, 0.5f, 0, 0.25f, -0.125f});
    QCOMPARE(p.scales, (std::vector<float>{float(2.54f / 127.0), float(0.25 / 127.0)}));
    QVERIFY(p.zeroPoints.empty());
}

void TestCalibration::absmaxMultiplyConventions() {
    auto s = calibrated(Preset::AscendQuant, Target::Int8, Scheme::PerTensor, {}, true, CalibMethod::AbsMax);
    const std::vector<float> x{3.0f, -6.0f};
    QCOMPARE(calibrate(resolveSpec(s, {2}), x).scales, (std::vector<float>{float(127.0 / 6.0)}));
    s.sqrtMode = true;
    QCOMPARE(calibrate(resolveSpec(s, {2}), x).scales, (std::vector<float>{float(std::sqrt(127.0 / 6.0))}));
    const auto plan = resolveSpec(s, {2});
    const auto codes = qltest::toInts(quantizeReference(plan, calibrate(plan, x), x));
    QCOMPARE(codes, (std::vector<int>{64, -127}));
}

void TestCalibration::minMaxAsymmetric() {
    const auto plan = resolveSpec(
        calibrated(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false, CalibMethod::MinMax), {3});
    const auto p = calibrate(plan, std::vector<float>{-1.0f, 0.5f, 3.0f});
    QCOMPARE(p.scales, (std::vector<float>{float(4.0 / 255.0)}));
    QCOMPARE(p.zeroPoints, (std::vector<float>{64.0f}));
    const auto codes = qltest::toInts(quantizeReference(plan, p, std::vector<float>{-1.0f, 0.0f, 3.0f}));
    QCOMPARE(codes, (std::vector<int>{0, 64, 255}));
}

void TestCalibration::zeroRangeNeverDividesByZero() {
    for (auto m : {CalibMethod::AbsMax, CalibMethod::Percentile, CalibMethod::Mse, CalibMethod::Entropy}) {
        const auto plan =
            resolveSpec(calibrated(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}, true, m), {2, 4});
        const std::vector<float> zeros(8, 0.0f);
        const auto p = calibrate(plan, zeros);
        for (float s : p.scales)
            QCOMPARE(s, 1.0f);
        QCOMPARE(qltest::toInts(quantizeReference(plan, p, zeros)), std::vector<int>(8, 0));
    }
    const auto asym = resolveSpec(
        calibrated(Preset::AclnnQuantize, Target::UInt8, Scheme::PerTensor, {}, false, CalibMethod::MinMax),
        {4});
    const auto p = calibrate(asym, std::vector<float>(4, 0.0f));
    QCOMPARE(p.scales[0], 1.0f);
    QCOMPARE(dequantizeReference(asym, p, quantizeReference(asym, p, std::vector<float>(4, 0.0f))),
             std::vector<float>(4, 0.0f));
}

void TestCalibration::subnormalRangeGetsANormalStep() {
    // 3e-39 / 2^31 underflows fp32; the step must stay a usable (normal) scale.
    for (auto t : {Target::Int32, Target::Int8}) {
        const auto plan = resolveSpec(
            calibrated(Preset::Torch, t, Scheme::PerChannel, {0}, true, CalibMethod::AbsMax), {2, 2});
        const std::vector<float> x{3e-39f, -1e-39f, 1.0f, 0.5f};
        const auto p = calibrate(plan, x);
        QCOMPARE(p.scales[0], std::numeric_limits<float>::min());
        checkParams(plan, p);
        QCOMPARE(qltest::toInts(quantizeReference(plan, p, x))[0], 0); // 0.255 steps rounds to 0
    }
}

void TestCalibration::nonFiniteValuesAreIgnored() {
    const auto plan = resolveSpec(
        calibrated(Preset::Torch, Target::Int8, Scheme::PerTensor, {}, true, CalibMethod::AbsMax), {4});
    const auto p = calibrate(plan, std::vector<float>{std::nanf(""), INFINITY, -2.0f, 1.0f});
    QCOMPARE(p.scales, (std::vector<float>{float(2.0 / 127.0)}));
}

void TestCalibration::percentile() {
    std::vector<float> x(1001);
    for (int i = 0; i <= 1000; ++i)
        x[i] = float(i - 500);
    auto s = calibrated(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, true, CalibMethod::Percentile);
    s.calibration.percentile = 90.0;
    const auto p = calibrate(resolveSpec(s, {1001}), x);
    QCOMPARE(p.scales, (std::vector<float>{float(450.0 / 127.0)}));
    s.calibration.percentile = 0.0;
    QVERIFY_THROWS_EXCEPTION(QuantError, calibrate(resolveSpec(s, {1001}), x));
}

void TestCalibration::mseBeatsAbsmaxWithOutliers() {
    const auto x = gaussianWithOutliers(4096);
    const auto mse = resolveSpec(
        calibrated(Preset::TensorRT, Target::Int4, Scheme::PerTensor, {}, true, CalibMethod::Mse), {4096});
    const auto absmax = resolveSpec(
        calibrated(Preset::TensorRT, Target::Int4, Scheme::PerTensor, {}, true, CalibMethod::AbsMax), {4096});
    const auto pm = calibrate(mse, x), pa = calibrate(absmax, x);
    QVERIFY(pm.scales[0] < pa.scales[0]);
    QVERIFY(mseOf(mse, pm, x) < mseOf(absmax, pa, x));
}

void TestCalibration::mseSearchTakesTheLeastScore_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<bool>("symmetric");
    QTest::addColumn<int>("rounding");
    QTest::newRow("int8 symmetric") << int(Target::Int8) << true << int(Rounding::HalfToEven);
    QTest::newRow("uint8 asymmetric") << int(Target::UInt8) << false << int(Rounding::HalfToEven);
    QTest::newRow("int4 symmetric, floor") << int(Target::Int4) << true << int(Rounding::Floor);
    QTest::newRow("uint4 asymmetric, away") << int(Target::UInt4) << false << int(Rounding::HalfAwayFromZero);
}

// Every clip ratio scored straight from the bins, without the search's prefix sums or its step rule:
// the search must take a least score, and count its clipped bins.
void TestCalibration::mseSearchTakesTheLeastScore() {
    QFETCH(int, target);
    QFETCH(bool, symmetric);
    QFETCH(int, rounding);
    auto spec =
        calibrated(Preset::Custom, Target(target), Scheme::PerTensor, {}, symmetric, CalibMethod::Mse);
    spec.rounding = Rounding(rounding);
    const auto plan = resolveSpec(spec, {4096});
    std::mt19937 rng(11);
    std::gamma_distribution<float> skewed(2.0f, 1.0f);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<float> x(4096);
        for (auto& v : x)
            v = skewed(rng) - 1.5f;
        x[static_cast<std::size_t>(trial)] = 12.0f + trial; // an outlier worth clipping
        GroupRange g;
        for (float v : x)
            g.add(v);
        const HistogramGeometry geo = mseGeometry(g, symmetric);
        std::vector<std::uint32_t> h(static_cast<std::size_t>(geo.bins), 0);
        for (float v : x)
            ++h[static_cast<std::size_t>(geo.binOf(v))];
        const double hi = symmetric ? std::max(-double(g.lo), double(g.hi)) : double(g.hi);
        const double lo = symmetric ? -hi : double(g.lo);
        const double qmin = double(plan.qmin()), qmax = double(plan.qmax());
        const double share = Rounding(rounding) == Rounding::Floor ? 1.0 / 3.0 : 1.0 / 12.0;
        struct Score {
            double error;
            std::int64_t clipped;
        };
        auto scoreOf = [&](double first, double second) {
            double step, zp = 0;
            if (symmetric) {
                step = std::max(std::fabs(first), std::fabs(second)) / qmax;
            } else {
                step = (std::max(second, 0.0) - std::min(first, 0.0)) / (qmax - qmin);
                zp = std::clamp(qmin - std::nearbyint(std::min(first, 0.0) / step), qmin, qmax);
            }
            const double left = (qmin - zp) * step, right = (qmax - zp) * step;
            Score s{0, 0};
            for (int b = 0; b < geo.bins; ++b) {
                const double c = lo + (b + 0.5) * (hi - lo) / geo.bins, n = h[static_cast<std::size_t>(b)];
                const double out = c < left ? left - c : c > right ? c - right : 0.0;
                s.error += out > 0 ? n * out * out : n * step * step * share;
                s.clipped += out > 0 ? static_cast<std::int64_t>(n) : 0;
            }
            return s;
        };
        double least = std::numeric_limits<double>::infinity();
        for (int k = 100; k >= 20; --k)
            least = std::min(least, scoreOf(lo * k / 100.0, hi * k / 100.0).error);
        const GroupClip best = mseSearch(g, h, plan);
        const Score chosen = scoreOf(best.range.first, best.range.second);
        QVERIFY2(
            chosen.error <= least * (1 + 1e-9),
            qPrintable(QStringLiteral("trial %1: %2 against %3").arg(trial).arg(chosen.error).arg(least)));
        QCOMPARE(best.clipped, chosen.clipped);
        QVERIFY(best.range.second < hi); // the outlier clipped
    }
}

void TestCalibration::entropyClipsOutliers() {
    const auto x = gaussianWithOutliers(20000);
    const auto plan = resolveSpec(
        calibrated(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, true, CalibMethod::Entropy),
        {20000});
    const float threshold = calibrate(plan, x).scales[0] * 127.0f;
    QVERIFY2(threshold > 2.0f && threshold < 20.0f, qPrintable(QString::number(threshold)));
}

void TestCalibration::explicitAndInvalidRequests() {
    const auto e = resolveSpec(
        calibrated(Preset::Torch, Target::Int8, Scheme::PerTensor, {}, true, CalibMethod::Explicit), {2});
    QVERIFY_THROWS_EXCEPTION(QuantError, calibrate(e, std::vector<float>{1, 2}));
    const auto mm = resolveSpec(
        calibrated(Preset::Torch, Target::Int8, Scheme::PerTensor, {}, true, CalibMethod::MinMax), {2});
    QVERIFY_THROWS_EXCEPTION(QuantError, calibrate(mm, std::vector<float>{1, 2}));
    auto g = calibrated(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {0}, false, CalibMethod::MinMax);
    g.groupEnds = {2};
    QVERIFY_THROWS_EXCEPTION(QuantError, calibrate(resolveSpec(g, {2, 2}), std::vector<float>{1, 2, 3, 4}));
}

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
