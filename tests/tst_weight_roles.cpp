// Weights in their model: the role table (quant/weight_role.h), the ONNX reader's word on
// each weight's consumer, and the jobs' per-tensor axes, on a model built with python3-onnx and on
// PaddleOCR's detector (the npm model tst_real_model fetches into the build folder).
#include "base/error.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "job_test_util.h"
#include "quant/weight_role.h"
#include "quantlens/config.h"

#include <QFileInfo>
#include <QMetaType>
#include <QTemporaryDir>
#include <QTest>

Q_DECLARE_METATYPE(ql::QuantSpec)

using namespace ql;
using namespace qltest;

namespace {

const TensorReport& reportNamed(const ModelOutcome& o, const std::string& name) {
    for (const auto& r : o.reports)
        if (r.name == name) return r;
    throw QuantError("no report for " + name);
}

} // namespace

class TestWeightRoles : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_model;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!QUANTLENS_HAVE_ONNX || !pythonHas(QStringLiteral("onnx, numpy"))) return;
        m_model = m_dir.filePath(QStringLiteral("roles.onnx"));
        QString err;
        runPython({QStringLiteral(QUANTLENS_TEST_SCRIPTS "/weight_roles_onnx.py"), m_model}, &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // The one table: each role's default channel and reduction axis, from shape, name or consumer.
    void roleTable_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<QString>("op"); // empty: no consumer known
        QTest::addColumn<int>("input");
        QTest::addColumn<bool>("transB");
        QTest::addColumn<qint64>("group");
        QTest::addColumn<QString>("role");
        QTest::addColumn<int>("channel");
        QTest::addColumn<int>("reduction");
        auto row = [](const char* label, const char* name, const Shape& shape, const char* op, int input,
                      bool transB, qint64 group, const char* role, int channel, int reduction) {
            QTest::addRow("%s", label)
                << QString::fromLatin1(name) << shape << QString::fromLatin1(op) << input << transB << group
                << QString::fromLatin1(role) << channel << reduction;
        };
        row("torch-linear", "model.layers.0.mlp.up_proj.weight", {11008, 4096}, "", 0, false, 1, "linear", 0,
            1);
        row("onnx-matmul", "linear_3.w_0", {96, 384}, "MatMul", 1, false, 1, "linear-in-out", 1, 0);
        row("onnx-matmul-batched", "w", {4, 96, 384}, "MatMul", 1, false, 1, "linear-in-out", 2, 1);
        row("onnx-gemm-transB", "fc.w", {10, 96}, "Gemm", 1, true, 1, "linear", 0, 1);
        row("onnx-gemm-plain", "fc.w", {96, 10}, "Gemm", 1, false, 1, "linear-in-out", 1, 0);
        row("onnx-conv", "conv2d_0.w_0", {16, 3, 3, 3}, "Conv", 1, false, 1, "conv", 0, 1);
        row("onnx-conv-1x1", "conv2d_42.w_0", {96, 384, 1, 1}, "Conv", 1, false, 1, "pointwise-conv", 0, 1);
        row("onnx-depthwise", "conv2d_394.w_0", {16, 1, 3, 3}, "Conv", 1, false, 16, "depthwise-conv", 0, 1);
        row("onnx-conv-transpose", "up.w", {64, 8, 2, 2}, "ConvTranspose", 1, false, 1, "conv-transpose", 1,
            0);
        row("onnx-gru-W", "gru.W", {1, 48, 64}, "GRU", 1, false, 1, "recurrent", 1, 2);
        row("onnx-lstm-R", "lstm.R", {2, 64, 16}, "LSTM", 2, false, 1, "recurrent", 1, 2);
        row("onnx-gather", "embedding_0.w_0", {6625, 96}, "Gather", 0, false, 1, "embedding", 0, 1);
        row("torch-conv", "features.0.weight", {32, 3, 3, 3}, "", 0, false, 1, "conv", 0, 1);
        row("torch-conv-1x1", "layer1.0.conv1.weight", {64, 256, 1, 1}, "", 0, false, 1, "pointwise-conv", 0,
            1);
        row("torch-depthwise", "dw.weight", {32, 1, 3, 3}, "", 0, false, 1, "depthwise-conv", 0, 1);
        row("torch-conv1d", "conv.weight", {256, 80, 3}, "", 0, false, 1, "conv", 0, 1);
        row("torch-gru", "rnn.weight_ih_l0", {384, 128}, "", 0, false, 1, "recurrent", 0, 1);
        row("torch-embedding", "model.embed_tokens.weight", {32000, 4096}, "", 0, false, 1, "embedding", 0,
            1);
        row("stacked-experts", "experts.w1", {8, 14336, 4096}, "", 0, false, 1, "stacked", 1, 2);
        row("keras-dense", "dense/kernel:0", {784, 128}, "", 0, false, 1, "linear-in-out", 1, 0);
        row("keras-conv", "conv2d/kernel:0", {3, 3, 16, 32}, "", 0, false, 1, "keras-conv", 3, 2);
        row("bias", "fc.bias", {10}, "Add", 1, false, 1, "vector", 0, 0);
        row("scalar", "scale", {}, "", 0, false, 1, "scalar", 0, 0);
        row("unknown-op-falls-back", "w", {10, 96}, "Add", 1, false, 1, "linear", 0, 1);
    }
    void roleTable() {
        QFETCH(QString, name);
        QFETCH(Shape, shape);
        QFETCH(QString, op);
        QFETCH(int, input);
        QFETCH(bool, transB);
        QFETCH(qint64, group);
        std::optional<WeightUse> use;
        if (!op.isEmpty()) use = WeightUse{op.toStdString(), input, transB, group};
        const RoleAxes r = weightRole(name.toStdString(), shape, use);
        QTEST(QString::fromLatin1(nameOf(r.role)), "role");
        QTEST(r.channelAxis, "channel");
        QTEST(r.reductionAxis, "reduction");
        QVERIFY(!describe(r).empty());
    }

    // Each format's default on each layout: the axis it takes, or why it is refused.
    void formatDefaults_data() {
        QTest::addColumn<QuantSpec>("spec");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<QString>("op");
        QTest::addColumn<qint64>("group");
        QTest::addColumn<int>("axis");        // the resolved axis; -1: none (per-tensor)
        QTest::addColumn<QString>("refusal"); // a part of the reason; empty: it plans
        const QuantSpec mx = roleSpec(Preset::MX), nv = roleSpec(Preset::NVFP4),
                        torch = roleSpec(Preset::Torch), g128 = roleGroupSpec(128);
        QuantSpec trt = roleSpec(Preset::TensorRT);
        trt.scheme = Scheme::Block;
        trt.block = {16};
        QuantSpec perTensor = roleSpec(Preset::Torch);
        perTensor.scheme = Scheme::PerTensor;
        auto row = [](const char* label, const QuantSpec& s, const Shape& shape, const char* op, qint64 group,
                      int axis, const char* refusal) {
            QTest::addRow("%s", label)
                << s << shape << QString::fromLatin1(op) << group << axis << QString::fromLatin1(refusal);
        };
        row("mx/linear", mx, {256, 512}, "", 1, 1, "");
        row("mx/matmul", mx, {512, 256}, "MatMul", 1, 0, "");
        row("mx/conv-1x1", mx, {96, 384, 1, 1}, "Conv", 1, 1, "");
        row("mx/conv-3x3", mx, {24, 96, 3, 3}, "Conv", 1, 1, "");
        row("mx/depthwise", mx, {64, 1, 3, 3}, "Conv", 64, 1, "hold one element each");
        row("mx/gru", mx, {1, 48, 64}, "GRU", 1, 2, "");
        // 65 input channels in blocks of 32 end with a block of one (Silero VAD's encoder convs).
        row("mx/conv1d-65-channels", mx, {128, 65, 3}, "Conv", 1, 1, "end with a block of one element");
        row("mx/conv1d-66-channels", mx, {128, 66, 3}, "Conv", 1, 1, "");
        row("g128/linear-129", g128, {256, 129}, "", 1, 1, "end with a block of one element");
        row("nvfp4/conv-1x1", nv, {96, 384, 1, 1}, "Conv", 1, 1, "");
        row("nvfp4/matmul", nv, {512, 256}, "MatMul", 1, 0, "");
        row("tensorrt-block/linear", trt, {64, 128}, "", 1, 1, "");
        row("torch-per-channel/linear", torch, {256, 512}, "", 1, 0, "");
        row("torch-per-channel/matmul", torch, {512, 256}, "MatMul", 1, 1, "");
        row("torch-per-channel/conv", torch, {16, 3, 3, 3}, "Conv", 1, 0, "");
        row("torch-per-channel/conv-transpose", torch, {64, 8, 2, 2}, "ConvTranspose", 1, 1, "");
        row("torch-per-channel/embedding", torch, {100, 64}, "Gather", 1, 0, "");
        row("g128/linear", g128, {256, 512}, "", 1, 1, "");
        row("g128/matmul", g128, {512, 256}, "MatMul", 1, 0, "");
        row("per-tensor/conv", perTensor, {16, 3, 3, 3}, "Conv", 1, -1, "");
    }
    void formatDefaults() {
        QFETCH(QuantSpec, spec);
        QFETCH(Shape, shape);
        QFETCH(QString, op);
        QFETCH(qint64, group);
        QFETCH(int, axis);
        QFETCH(QString, refusal);
        std::optional<WeightUse> use;
        if (!op.isEmpty()) use = WeightUse{op.toStdString(), 1, false, group};
        const QuantSpec s = specForRole(spec, weightRole("w", shape, use));
        if (axis < 0) {
            QVERIFY(s.axes.empty());
        } else {
            QCOMPARE(s.axes, std::vector<int>{axis});
        }
        const ResolvedSpec plan = resolveSpec(s, shape);
        const std::string why = degenerateLayout(plan);
        if (refusal.isEmpty())
            QVERIFY2(why.empty(), why.c_str());
        else
            QVERIFY2(QString::fromStdString(why).contains(refusal), why.c_str());
    }

    // The old default, MX along the last axis of a 1x1 conv, is the degenerate layout.
    void lastAxisOfPointwiseConvIsRefused() {
        QuantSpec s = roleSpec(Preset::MX);
        s.axes = {-1};
        const std::string why = degenerateLayout(resolveSpec(s, {96, 384, 1, 1}));
        QVERIFY2(QString::fromStdString(why).contains(QStringLiteral("axis 3")), why.c_str());
        s.axes = {1};
        QVERIFY(degenerateLayout(resolveSpec(s, {96, 384, 1, 1})).empty());
        // A one-element tensor is not a layout problem.
        s.axes.clear();
        QVERIFY(degenerateLayout(resolveSpec(s, {1})).empty());
    }

    // The ONNX reader names each weight's consumer.
    void onnxConsumers() {
        if (m_model.isEmpty()) QSKIP("needs an ONNX build and python3 with onnx and numpy");
        const auto src = openTensorSource(m_model.toStdString());
        auto roleName = [&](const char* n) {
            const TensorInfo* info = src->find(n);
            if (!info) return std::string("missing");
            return std::string(nameOf(weightRole(n, info->shape, src->weightUse(n)).role));
        };
        QCOMPARE(roleName("mm.w"), std::string("linear-in-out"));
        QCOMPARE(roleName("gemm_t.w"), std::string("linear"));
        QCOMPARE(roleName("gemm_n.w"), std::string("linear-in-out"));
        QCOMPARE(roleName("conv3.w"), std::string("conv"));
        QCOMPARE(roleName("conv1.w"), std::string("pointwise-conv"));
        QCOMPARE(roleName("dw.w"), std::string("depthwise-conv"));
        QCOMPARE(roleName("deconv.w"), std::string("conv-transpose"));
        QCOMPARE(roleName("gru.W"), std::string("recurrent"));
        QCOMPARE(roleName("gru.R"), std::string("recurrent"));
        QCOMPARE(roleName("emb.w"), std::string("embedding"));
        const auto use = src->weightUse("dw.w");
        QVERIFY(use);
        QCOMPARE(use->op, std::string("Conv"));
        QCOMPARE(use->input, 1);
        QCOMPARE(use->group, std::int64_t{64});
        QVERIFY(src->weightUse("gemm_t.w")->transB);
        QCOMPARE(src->weightUse("conv3.b")->input, 2);
    }

    // A whole-model run without an axis: every tensor its own role's axis; with one, that axis for all,
    // failing where it does not fit.
    void modelRunTakesEachRolesAxis() {
        if (m_model.isEmpty()) QSKIP("needs an ONNX build and python3 with onnx and numpy");
        JobRequest request = jobRequest(m_model.toStdString(), roleSpec(Preset::MX));
        request.roleAxes = true;
        const std::vector<std::string> names{"mm.w", "conv1.w", "dw.w", "gru.W", "emb.w"};
        const ModelOutcome o = runModelJob(request, names);
        QCOMPARE(reportNamed(o, "mm.w").plan.spec.axes, std::vector<int>{0});
        QCOMPARE(reportNamed(o, "conv1.w").plan.spec.axes, std::vector<int>{1});
        QVERIFY(reportNamed(o, "conv1.w").quantized());
        QCOMPARE(reportNamed(o, "gru.W").plan.spec.axes, std::vector<int>{2});
        QCOMPARE(reportNamed(o, "emb.w").plan.spec.axes, std::vector<int>{1});
        const TensorReport& dw = reportNamed(o, "dw.w");
        QVERIFY(!dw.quantized());
        QVERIFY2(QString::fromStdString(dw.passedThrough).contains(QStringLiteral("depthwise-conv")),
                 dw.passedThrough.c_str());
        QCOMPARE(o.passedThrough, 1);

        // Named tensors, one explicit axis: the last axis fits the MatMul, not the 1x1 conv.
        request.roleAxes = false;
        request.spec.axes = {-1};
        const ModelOutcome named = runModelJob(request, {"mm.w", "conv1.w"}, {.passThrough = false});
        QVERIFY(reportNamed(named, "mm.w").quantized());
        QCOMPARE(reportNamed(named, "mm.w").plan.spec.axes, std::vector<int>{-1});
        QVERIFY(
            QString::fromStdString(reportNamed(named, "conv1.w").error).contains(QStringLiteral("axis 3")));
        QCOMPARE(named.failed, 1);
    }

    // One tensor job likewise: the per-channel default is the MatMul's output channel (axis 1).
    void tensorRunTakesTheRolesAxis() {
        if (m_model.isEmpty()) QSKIP("needs an ONNX build and python3 with onnx and numpy");
        JobRequest request = jobRequest(m_model.toStdString(), roleSpec(Preset::Torch));
        request.roleAxes = true;
        const TensorOutcome o = runTensorJob(request, "mm.w");
        QCOMPARE(o.a.report.plan.spec.axes, std::vector<int>{1});
        QCOMPARE(o.a.report.params.scales.size(), std::size_t{48});
        QVERIFY_THROWS_EXCEPTION(QuantError, [&] {
            request.spec = roleSpec(Preset::MX);
            (void)runTensorJob(request, "dw.w");
        }());
    }

    // PaddleOCR's detector: MX on its 1x1 convs along the input channels clips a fraction of what the
    // last axis (1-element blocks) clipped, and no 1x1 conv is refused.
    void paddleDetectorPointwiseConvs() {
        const QString model =
            QStringLiteral(QUANTLENS_BINARY_DIR "/io-real-models/package/assets/ch_PP-OCRv4_det_infer.onnx");
        if (!QUANTLENS_HAVE_ONNX) QSKIP("this build reads no ONNX");
        if (!QFileInfo::exists(model))
            QSKIP("the PaddleOCR models are fetched by tst_real_model (npm); run it first");
        JobRequest request = jobRequest(model.toStdString(), roleSpec(Preset::MX));
        request.spec.target = Target::Fp4E2M1;
        request.roleAxes = true;
        std::vector<std::string> pointwise;
        for (const TensorInfo& t : request.source->tensors())
            if (t.shape.size() == 4 && t.shape[2] == 1 && t.shape[3] == 1 && t.shape[1] >= 32)
                pointwise.push_back(t.name);
        QVERIFY(pointwise.size() > 20);
        const ModelOutcome byRole = runModelJob(request, pointwise);
        request.roleAxes = false;
        request.spec.axes = {-1};
        const ModelOutcome lastAxis = runModelJob(request, pointwise, {.passThrough = true});
        QCOMPARE(byRole.passedThrough, 0);
        QCOMPARE(byRole.failed, 0);
        QCOMPARE(lastAxis.passedThrough, static_cast<int>(pointwise.size())); // refused: 1-element blocks
        double clipped = 0;
        for (const auto& r : byRole.reports) {
            QCOMPARE(r.plan.spec.axes, std::vector<int>{1});
            clipped += r.analysis.clipping.total().clippedFraction();
        }
        QVERIFY2(clipped / static_cast<double>(pointwise.size()) < 0.10,
                 qPrintable(QString::number(clipped / static_cast<double>(pointwise.size()))));
    }
};

QTEST_GUILESS_MAIN(TestWeightRoles)
#include "tst_weight_roles.moc"
