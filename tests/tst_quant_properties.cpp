// Properties over a grid of presets, targets, layouts and odd/even shapes, on random data:
// codes stay in range; every unclipped element dequantizes within half a step (fp: half an ulp).
#include "quant/calibration.h"
#include "quant/packing.h"
#include "quant_test_util.h"

#include <QTest>
#include <cmath>
#include <random>

using namespace ql;

namespace {

// Half the spacing of a mini-float at magnitude |t|.
double halfUlp(double t, MiniFloat f) {
    const int mant = f == MiniFloat::E4M3FN ? 3 : (f == MiniFloat::E5M2 ? 2 : 1);
    const int minExp = f == MiniFloat::E4M3FN ? -6 : (f == MiniFloat::E5M2 ? -14 : 0);
    int e;
    std::frexp(std::max(std::fabs(t), 1e-30), &e);
    return std::ldexp(1.0, std::max(e - 1, minExp) - mant) / 2;
}

} // namespace

class TestQuantProperties : public QObject {
    Q_OBJECT
private slots:
    void grid_data();
    void grid();
};

void TestQuantProperties::grid_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    using S = std::vector<std::int64_t>;
    const auto add = [](const char* name, QuantSpec s, const S& shape) {
        s.calibration.method = CalibMethod::AbsMax;
        QTest::addRow("%s/%s", name, toString(shape).c_str()) << s << shape;
    };
    for (S shape : {S{7, 13}, S{8, 32}, S{3, 5, 16}}) {
        const auto pc = [&](Preset p, Target t, bool sym = true) {
            return qltest::spec(p, t, Scheme::PerChannel, {0}, sym);
        };
        add("torch/int8/per-channel", pc(Preset::Torch, Target::Int8), shape);
        add(
            "torch/uint8/per-channel-asym",
            [&] {
                auto s = pc(Preset::Torch, Target::UInt8, false);
                s.calibration.method = CalibMethod::MinMax;
                return s;
            }(),
            shape);
        add("torch/uint4/per-tensor", qltest::spec(Preset::Torch, Target::UInt4, Scheme::PerTensor), shape);
        add("tensorrt/int4/per-channel", pc(Preset::TensorRT, Target::Int4), shape);
        add("tensorrt/fp8/per-tensor", qltest::spec(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor),
            shape);
        add("tensorrt/fp4/per-channel", pc(Preset::TensorRT, Target::Fp4E2M1), shape);
        add("aclnn-quantize/int8", pc(Preset::AclnnQuantize, Target::Int8), shape);
        add("aclnn-quantize/fp8-e5m2", pc(Preset::AclnnQuantize, Target::Fp8E5M2), shape);
        auto ascend = qltest::spec(Preset::AscendQuant, Target::Int8, Scheme::PerChannel, {-1});
        add("ascend-quant/int8/last-axis", ascend, shape);
        ascend.sqrtMode = true;
        add("ascend-quant/int8/sqrt", ascend, shape);
        if (shape.back() % 8 == 0) {
            auto packed = qltest::spec(Preset::AscendQuant, Target::Int32, Scheme::PerTensor);
            add("ascend-quant/int32-packed", packed, shape);
        }
        auto group = qltest::spec(Preset::Custom, Target::Int4, Scheme::PerGroup, {-1});
        group.groupSize = 4;
        add("custom/int4/g4-short-tail", group, shape);
        add("mx/fp8", qltest::spec(Preset::MX, Target::Fp8E4M3, Scheme::Block, {}), shape);
        add("mx/fp4", qltest::spec(Preset::MX, Target::Fp4E2M1, Scheme::Block, {}), shape);
        if (shape.back() % 16 == 0)
            add("nvfp4", qltest::spec(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {}), shape);
        if (shape.size() == 2) {
            auto ragged = qltest::spec(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {0});
            ragged.groupEnds = {1, 1, shape[0]};
            add("npu-group-quant/ragged", ragged, shape);
            add("pypto/per-row", qltest::spec(Preset::PyPTO, Target::Int8, Scheme::PerChannel, {0}), shape);
        }
    }
}

void TestQuantProperties::grid() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<std::int64_t>, shape);
    std::mt19937 rng(static_cast<unsigned>(qHash(QString::fromLatin1(QTest::currentDataTag()))));
    std::normal_distribution<float> normal(0.0f, 2.0f);
    const auto plan = resolveSpec(spec, shape);
    std::vector<float> x(static_cast<std::size_t>(elementCount(shape)));
    for (auto& v : x)
        v = normal(rng);
    const auto params = calibrate(plan, x);
    const auto codes = quantizeReference(plan, params, x);
    const auto back = dequantizeReference(plan, params, codes);
    ScaleIndexer indexer(plan.layout, plan.shape);
    int checked = 0;
    indexer.forEach([&](std::int64_t i, std::int64_t s) {
        const int q = codes.at(i);
        const float scale = params.scales[std::size_t(s)];
        const double step = stepFromOperatorScale(scale, plan.convention);
        if (isFloatTarget(plan.codeTarget)) {
            const auto f = miniFloatOf(plan.codeTarget);
            const double t = double(x[std::size_t(i)]) / step;
            if (std::fabs(t) > maxFinite(f)) return; // clipped
            const double err = std::fabs(double(decodeMiniFloat(std::uint8_t(q), f)) - t);
            QVERIFY2(err <= halfUlp(t, f) * (1 + 1e-6) + 1e-12,
                     qPrintable(QStringLiteral("element %1: t=%2 err=%3").arg(i).arg(t).arg(err)));
        } else {
            QVERIFY(q >= plan.qmin() && q <= plan.qmax());
            if (q == plan.qmin() || q == plan.qmax()) return; // possibly clipped
            const double err = std::fabs(double(back[std::size_t(i)]) - double(x[std::size_t(i)]));
            QVERIFY2(
                err <= step / 2 * (1 + 1e-5) + 1e-7,
                qPrintable(QStringLiteral("element %1: err %2 > step/2 %3").arg(i).arg(err).arg(step / 2)));
        }
        ++checked;
    });
    QVERIFY(checked > 0);
    if (plan.convention.packing == Packing::Int32Words)
        QCOMPARE(unpackInt32Words(packInt32Words(codes, plan.shape), plan.shape), codes);
    if (plan.convention.packing == Packing::NibblesFlat)
        QCOMPARE(unpackNibbles(packNibbles(codes), codes.target(), codes.size()), codes);
}

QTEST_GUILESS_MAIN(TestQuantProperties)
#include "tst_quant_properties.moc"
