// Calibration methods: absmax, min-max, percentile, MSE search, entropy (KL); zero ranges; NaN/Inf.
#include "quant/calibration.h"
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
