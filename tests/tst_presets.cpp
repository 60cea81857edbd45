// Each operator's constraints are enforced, and the error says which rule was broken.
#include "quant_test_util.h"

#include <QTest>
#include <cctype>
#include <set>

using namespace ql;
using qltest::spec;

class TestPresets : public QObject {
    Q_OBJECT
private slots:
    void presetTableIsTheOneSource();
    void rejected_data();
    void rejected();
    void accepted_data();
    void accepted();
    void conventions();
    void paramsChecked_data();
    void paramsChecked();
};

void TestPresets::rejected_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    QTest::addColumn<QString>("reason");
    using S = std::vector<std::int64_t>;
    QTest::addRow("torch/no-int4") << spec(Preset::Torch, Target::Int4, Scheme::PerTensor) << S{8}
                                   << QStringLiteral("does not produce int4");
    QTest::addRow("torch/no-per-group") << spec(Preset::Torch, Target::Int8, Scheme::PerGroup, {0}) << S{8, 8}
                                        << QStringLiteral("has no per-group scheme");
    QTest::addRow("torch/one-axis") << spec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0, 1})
                                    << S{4, 4} << QStringLiteral("exactly one channel axis");
    auto torchRound = spec(Preset::Torch, Target::Int8, Scheme::PerTensor);
    torchRound.rounding = Rounding::Floor;
    QTest::addRow("torch/fixed-rounding")
        << torchRound << S{4} << QStringLiteral("always rounds half to even");
    QTest::addRow("axis-out-of-range") << spec(Preset::Torch, Target::Int8, Scheme::PerChannel, {2})
                                       << S{4, 4} << QStringLiteral("axis 2 is out of range");
    QTest::addRow("tensorrt/symmetric-only")
        << spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, false) << S{4}
        << QStringLiteral("only symmetric");
    auto trtBlock = spec(Preset::TensorRT, Target::Int4, Scheme::Block, {-1});
    trtBlock.block = {128};
    QTest::addRow("tensorrt/block-must-divide")
        << trtBlock << S{4, 200} << QStringLiteral("no short last block");
    QTest::addRow("tensorrt/no-uint8") << spec(Preset::TensorRT, Target::UInt8, Scheme::PerTensor) << S{4}
                                       << QStringLiteral("does not produce uint8");
    QTest::addRow("aclnn-quantize/no-int4") << spec(Preset::AclnnQuantize, Target::Int4, Scheme::PerTensor)
                                            << S{4} << QStringLiteral("does not produce int4");
    QTest::addRow("ascend-quant/axis-last-two")
        << spec(Preset::AscendQuant, Target::Int8, Scheme::PerChannel, {0}) << S{2, 3, 4}
        << QStringLiteral("last two dimensions");
    QTest::addRow("ascend-quant/int4-even") << spec(Preset::AscendQuant, Target::Int4, Scheme::PerTensor)
                                            << S{3, 5} << QStringLiteral("even last dimension");
    QTest::addRow("ascend-quant/int32-multiple-of-8")
        << spec(Preset::AscendQuant, Target::Int32, Scheme::PerTensor) << S{3, 12}
        << QStringLiteral("must be a multiple of 8");
    auto hybrid = spec(Preset::AscendQuant, Target::Int8, Scheme::PerTensor);
    hybrid.rounding = Rounding::HalfAwayFromZero;
    QTest::addRow("ascend-quant/no-half-away") << hybrid << S{4} << QStringLiteral("hybrid is HiFloat8 only");
    auto sqrtTorch = spec(Preset::Torch, Target::Int8, Scheme::PerTensor);
    sqrtTorch.sqrtMode = true;
    QTest::addRow("sqrt-mode-ascend-only")
        << sqrtTorch << S{4} << QStringLiteral("aclnnAscendQuantV3 option");
    auto ragged = spec(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {0});
    ragged.groupEnds = {2, 5};
    QTest::addRow("npu-group-quant/ends-must-reach-rows")
        << ragged << S{6, 4} << QStringLiteral("the last entry must equal it");
    ragged.groupEnds = {3, 2, 6};
    QTest::addRow("npu-group-quant/non-decreasing") << ragged << S{6, 4} << QStringLiteral("non-decreasing");
    ragged.groupEnds = {6};
    QTest::addRow("npu-group-quant/2d-only") << ragged << S{6} << QStringLiteral("must be 2-D");
    QTest::addRow("pypto/uint8-needs-zero-points")
        << spec(Preset::PyPTO, Target::UInt8, Scheme::PerChannel, {0}) << S{2, 4}
        << QStringLiteral("must be int8");
    QTest::addRow("pypto/shared-axis-last-two")
        << spec(Preset::PyPTO, Target::Int8, Scheme::PerChannel, {1, 2}) << S{2, 3, 4}
        << QStringLiteral("every axis but one of the last two");
    QTest::addRow("pypto/rank") << spec(Preset::PyPTO, Target::Int8, Scheme::PerChannel, {0})
                                << S{1, 1, 1, 1, 1, 2} << QStringLiteral("rank must be 1 to 5");
    QTest::addRow("mx/no-int8") << spec(Preset::MX, Target::Int8, Scheme::Block) << S{64}
                                << QStringLiteral("does not produce int8");
    QTest::addRow("fp8-has-no-zero-point")
        << spec(Preset::Custom, Target::Fp8E4M3, Scheme::PerTensor, {}, false) << S{4}
        << QStringLiteral("has no zero point");
    QTest::addRow("narrow-unsigned") << [] {
        auto s = spec(Preset::Torch, Target::UInt8, Scheme::PerTensor);
        s.narrowRange = true;
        return s;
    }() << S{4} << QStringLiteral("signed integer targets only");
}

void TestPresets::rejected() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<std::int64_t>, shape);
    QFETCH(QString, reason);
    try {
        resolveSpec(spec, shape);
        QFAIL("the spec was accepted");
    } catch (const QuantError& e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(message.contains(reason), qPrintable(message));
    }
}

void TestPresets::accepted_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    QTest::addColumn<std::vector<std::int64_t>>("scaleShape");
    using S = std::vector<std::int64_t>;
    QTest::addRow("per-tensor") << spec(Preset::Torch, Target::Int8, Scheme::PerTensor) << S{4, 6} << S{1, 1};
    QTest::addRow("per-channel/negative-axis")
        << spec(Preset::Torch, Target::Int8, Scheme::PerChannel, {-1}) << S{4, 6} << S{1, 6};
    auto g = spec(Preset::Custom, Target::Int4, Scheme::PerGroup, {-1});
    g.groupSize = 4;
    QTest::addRow("per-group/short-last-group") << g << S{3, 10} << S{3, 3};
    auto b = spec(Preset::TensorRT, Target::Fp8E4M3, Scheme::Block);
    b.block = {128, 128};
    QTest::addRow("tensorrt/block-128x128") << b << S{256, 384} << S{2, 3};
    auto r = spec(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {0});
    r.groupEnds = {1, 4, 6, 6};
    QTest::addRow("npu-group-quant/empty-group") << r << S{6, 4} << S{4, 4};
    QTest::addRow("pypto/3d-per-row")
        << spec(Preset::PyPTO, Target::Int8, Scheme::PerChannel, {0, 1}) << S{2, 3, 4} << S{2, 3, 1};
    QTest::addRow("pypto/1d") << spec(Preset::PyPTO, Target::Int8, Scheme::PerTensor) << S{5} << S{1};
    QTest::addRow("mx/last-axis") << spec(Preset::MX, Target::Fp4E2M1, Scheme::Block, {}) << S{2, 64}
                                  << S{2, 2};
    QTest::addRow("scalar") << spec(Preset::Torch, Target::Int8, Scheme::PerTensor) << S{} << S{};
    QTest::addRow("empty") << spec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}) << S{0, 3}
                           << S{0, 1};
}

void TestPresets::accepted() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<std::int64_t>, shape);
    QFETCH(std::vector<std::int64_t>, scaleShape);
    spec.calibration.method = spec.preset == Preset::MX ? CalibMethod::AbsMax : CalibMethod::Explicit;
    QCOMPARE(resolveSpec(spec, shape).scaleShape, scaleShape);
}

void TestPresets::conventions() {
    const auto c = [](Preset p, Target t = Target::Int8) {
        return conventionOf(spec(p, t, Scheme::PerTensor));
    };
    QCOMPARE(c(Preset::Torch).scaleOp, ScaleOp::MultiplyReciprocal);
    QCOMPARE(c(Preset::Torch).zeroPoint, ZeroPointStage::AfterRounding);
    QCOMPARE(c(Preset::AclnnQuantize).scaleOp, ScaleOp::Divide);
    QCOMPARE(c(Preset::AclnnQuantize).zeroPoint, ZeroPointStage::BeforeRounding);
    QCOMPARE(c(Preset::TensorRT).scaleOp, ScaleOp::Divide);
    QCOMPARE(c(Preset::AscendQuant).scaleOp, ScaleOp::Multiply);
    QCOMPARE(c(Preset::PyPTO).scaleOp, ScaleOp::Multiply);
    QCOMPARE(c(Preset::AscendQuant, Target::Int32).packing, Packing::Int32Words);
    QCOMPARE(c(Preset::Torch, Target::UInt4).packing, Packing::NibblesFlat);
    QCOMPARE(c(Preset::AclnnQuantize, Target::Int32).packing, Packing::None); // plain qint32 there
}

void TestPresets::paramsChecked_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<float>>("scales");
    QTest::addColumn<std::vector<float>>("zeroPoints");
    QTest::addColumn<QString>("reason");
    const auto t = spec(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false);
    QTest::addRow("zero-scale") << t << std::vector<float>{0} << std::vector<float>{0}
                                << QStringLiteral("finite and non-zero");
    QTest::addRow("negative-torch-scale")
        << t << std::vector<float>{-1} << std::vector<float>{0} << QStringLiteral("needs positive scales");
    QTest::addRow("zp-out-of-range") << t << std::vector<float>{1} << std::vector<float>{300}
                                     << QStringLiteral("outside the range of uint8");
    QTest::addRow("zp-not-integral") << t << std::vector<float>{1} << std::vector<float>{1.5f}
                                     << QStringLiteral("takes integer zero points");
    QTest::addRow("wrong-scale-count")
        << t << std::vector<float>{1, 2} << std::vector<float>{} << QStringLiteral("expected 1 scales");
    QTest::addRow("symmetric-with-zp")
        << spec(Preset::Torch, Target::Int8, Scheme::PerTensor) << std::vector<float>{1}
        << std::vector<float>{3} << QStringLiteral("symmetric spec has no zero point");
}

void TestPresets::paramsChecked() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<float>, scales);
    QFETCH(std::vector<float>, zeroPoints);
    QFETCH(QString, reason);
    try {
        qltest::quantize(spec, {4}, {1, 2, 3, 4}, scales, zeroPoints);
        QFAIL("the parameters were accepted");
    } catch (const QuantError& e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(message.contains(reason), qPrintable(message));
    }
}

// The preset table: one row per preset in enumerator order, names that read back in any case,
// and block formats whose plans use the table's block size and accept exactly its targets.
void TestPresets::presetTableIsTheOneSource() {
    const auto presets = allPresets();
    QCOMPARE(presets.size(), static_cast<std::size_t>(Preset::Custom) + 1);
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < presets.size(); ++i) {
        const PresetInfo& p = presets[i];
        QCOMPARE(static_cast<std::size_t>(p.preset), i);
        QVERIFY(names.insert(p.name).second);
        QCOMPARE(presetFromName(p.name), std::optional<Preset>(p.preset));
        std::string upper(p.name);
        for (char& c : upper)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        QCOMPARE(presetFromName(upper), std::optional<Preset>(p.preset));
        QVERIFY(!p.reproduces.empty());
        QVERIFY(p.targets[static_cast<std::size_t>(p.defaultTarget)]);
        if (!isBlockFormat(p.preset)) continue;
        for (std::size_t t = 0; t < p.targets.size(); ++t) {
            QuantSpec s;
            s.preset = p.preset;
            s.target = static_cast<Target>(t);
            s.scheme = Scheme::Block;
            s.axes = {}; // the format's own axis: the last
            bool planned = true;
            try {
                const ResolvedSpec plan = resolveSpec(s, {4, 128});
                QCOMPARE(plan.scaleShape, (Shape{4, 128 / p.formatBlock}));
            } catch (const QuantError&) {
                planned = false;
            }
            QCOMPARE(planned, p.targets[t]);
        }
    }
    QCOMPARE(presetInfo(Preset::MX).formatBlock, 32);
    QCOMPARE(presetInfo(Preset::NVFP4).formatBlock, 16);
}

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"
