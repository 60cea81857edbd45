// A conv quantized through its [O, I*kh*kw] view (quant/weight_view.h): the role rule picks the
// tensor as it is where its layout fits and the view where only that fits, and refuses with the
// flattened count where neither does; the view's codes are the tensor's own (the scalar reference on
// the tensor's shape is the oracle); the report shows both shapes; every export re-opens as the
// tensor's own shape and `diff --requantize` against the original finds 0 mismatched codes.
#include "base/error.h"
#include "cli_test_util.h"
#include "io/export_reader.h"
#include "io/safetensors_writer.h"
#include "job_test_util.h"
#include "quant/calibration.h"
#include "quant/reference.h"
#include "quant/spec_json.h"
#include "quant/weight_view.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMetaType>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <random>

Q_DECLARE_METATYPE(ql::QuantSpec)

using namespace ql;
using qltest::roleGroupSpec;
using qltest::roleSpec;
using qltest::runCli;

namespace {

std::vector<float> gaussian(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 0.05f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v)
        x = d(rng);
    return v;
}

QStringList split(const char* args) {
    return QString::fromLatin1(args).split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return nlohmann::json::parse(f.readAll().toStdString());
}

const nlohmann::json* tensorNamed(const nlohmann::json& report, const std::string& name) {
    for (const auto& t : report["tensors"])
        if (t["name"] == name) return &t;
    return nullptr;
}

// The small model the CLI rows run on: each kind of conv weight, a Linear, and a bias kept as it is.
const std::vector<std::pair<std::string, Shape>> kWeights = {
    {"conv.weight", {16, 3, 3, 3}},  // 27 values per output channel
    {"wide.weight", {64, 24, 2, 2}}, // 96: NVFP4's 16 divide it, not the 24 input channels
    {"dw5.weight", {192, 1, 5, 5}},  // depthwise 5x5: 25
    {"dw3.weight", {48, 1, 3, 3}},   // depthwise 3x3: 9
    {"pw.weight", {32, 64, 1, 1}},   // pointwise: the input channels as they are
    {"deep.weight", {32, 64, 3, 3}}, // MX's 32 fit the 64 input channels as they are
    {"dw7.weight", {8, 1, 7, 7}},    // depthwise 7x7: 49, one MX block and a short one
    {"conv1d.weight", {128, 65, 3}}, // 65 channels end with a block of one; flattened, 195 do not
    {"fc.weight", {64, 128}},        // a Linear: no view
};

} // namespace

class TestWeightViews : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_model;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_model = m_dir.filePath(QStringLiteral("convs.safetensors"));
        std::vector<NamedTensor> t;
        t.reserve(kWeights.size() + 1);
        unsigned seed = 1;
        for (const auto& [name, shape] : kWeights)
            t.push_back({name, Tensor::fromFloats(shape, gaussian(elementCount(shape), seed++))});
        t.push_back({"conv.bias", Tensor::fromFloats(Shape{16}, gaussian(16, 99))});
        writeSafetensors(m_model.toStdString(), t);
    }

    // The view of each role: a conv's reduction with its kernel, a Keras kernel's likewise; none for
    // the roles whose reduction is one axis already.
    void views_data() {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<QString>("name");
        QTest::addColumn<Shape>("view"); // empty: none
        QTest::addColumn<int>("channel");
        QTest::addColumn<int>("reduction");
        QTest::addRow("conv") << Shape{16, 3, 3, 3} << QStringLiteral("c.weight") << Shape{16, 27} << 0 << 1;
        QTest::addRow("pointwise") << Shape{96, 384, 1, 1} << QStringLiteral("c.weight") << Shape{96, 384}
                                   << 0 << 1;
        QTest::addRow("depthwise") << Shape{192, 1, 5, 5} << QStringLiteral("c.weight") << Shape{192, 25} << 0
                                   << 1;
        QTest::addRow("conv1d") << Shape{128, 65, 3} << QStringLiteral("c.weight") << Shape{128, 195} << 0
                                << 1;
        QTest::addRow("conv3d") << Shape{8, 4, 3, 3, 3} << QStringLiteral("c.weight") << Shape{8, 108} << 0
                                << 1;
        QTest::addRow("keras-conv") << Shape{3, 3, 16, 32} << QStringLiteral("conv2d/kernel:0")
                                    << Shape{144, 32} << 1 << 0;
        QTest::addRow("linear") << Shape{64, 128} << QStringLiteral("fc.weight") << Shape{} << 0 << 0;
        QTest::addRow("stacked") << Shape{8, 512, 256} << QStringLiteral("experts.w") << Shape{} << 0 << 0;
        QTest::addRow("bias") << Shape{64} << QStringLiteral("fc.bias") << Shape{} << 0 << 0;
    }
    void views() {
        QFETCH(Shape, shape);
        QFETCH(QString, name);
        QFETCH(Shape, view);
        const RoleAxes role = weightRole(name.toStdString(), shape);
        const auto v = flattenedView(role, shape);
        QCOMPARE(v.value_or(Shape{}), view);
        if (!v) return;
        QCOMPARE(elementCount(*v), elementCount(shape));
        QTEST(viewAxes(role).channelAxis, "channel");
        QTEST(viewAxes(role).reductionAxis, "reduction");
    }

    // The rule: as it is where that fits, else the view, else a refusal naming what does not fit.
    void planForRole_data() {
        QTest::addColumn<QuantSpec>("spec");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<QString>("name");
        QTest::addColumn<Shape>("planShape"); // what the layout indexes; empty: refused
        QTest::addColumn<int>("axis");
        QTest::addColumn<QString>("refusal"); // the whole reason's tail, or a part of it
        const QuantSpec ascend = roleSpec(Preset::AscendQuant, Target::Int8),
                        ascend4 = roleSpec(Preset::AscendQuant, Target::Int4),
                        torch = roleSpec(Preset::Torch, Target::Int8),
                        pypto = roleSpec(Preset::PyPTO, Target::Int8),
                        mx = roleSpec(Preset::MX, Target::Fp4E2M1),
                        nv = roleSpec(Preset::NVFP4, Target::Fp4E2M1);
        QuantSpec trt = roleSpec(Preset::TensorRT, Target::Int4);
        trt.scheme = Scheme::Block;
        trt.block = {1, 32};
        const auto row = [](const char* label, const QuantSpec& s, const Shape& shape, const char* name,
                            const Shape& planShape, int axis, const char* refusal) {
            QTest::addRow("%s", label) << s << shape << QString::fromLatin1(name) << planShape << axis
                                       << QString::fromLatin1(refusal);
        };
        // Ascend's scale axis is one of the last two: a conv's output channel is, in its view.
        row("ascend/conv", ascend, {16, 3, 3, 3}, "c.weight", {16, 27}, 0, "");
        row("ascend/depthwise", ascend, {192, 1, 5, 5}, "c.weight", {192, 25}, 0, "");
        row("ascend/pointwise", ascend, {96, 384, 1, 1}, "c.weight", {96, 384}, 0, "");
        row("ascend-int4/conv", ascend4, {16, 2, 3, 3}, "c.weight", {16, 18}, 0, "");
        row("ascend-int4/odd-view", ascend4, {16, 3, 3, 3}, "c.weight", {}, 0,
            "as [16, 27] (the kernel flattened): ascend-quant: int4 output needs an even last dimension");
        row("ascend/keras-conv-as-it-is", ascend, {3, 3, 16, 32}, "conv2d/kernel:0", {3, 3, 16, 32}, 3, "");
        row("ascend/linear", ascend, {64, 128}, "fc.weight", {64, 128}, 0, "");
        row("pypto/conv", pypto, {16, 3, 3, 3}, "c.weight", {16, 27}, 0, "");
        row("torch/conv-as-it-is", torch, {16, 3, 3, 3}, "c.weight", {16, 3, 3, 3}, 0, "");
        // Blocks along the input channels where whole blocks fit; else along the flattened kernel.
        row("mx/conv-64-channels-as-it-is", mx, {32, 64, 3, 3}, "c.weight", {32, 64, 3, 3}, 1, "");
        row("mx/conv-24-channels-short-block", mx, {64, 24, 3, 3}, "c.weight", {64, 24, 3, 3}, 1, "");
        row("mx/conv1d-65-channels", mx, {128, 65, 3}, "c.weight", {128, 195}, 1, "");
        row("mx/depthwise-7x7", mx, {8, 1, 7, 7}, "c.weight", {8, 49}, 1, "");
        row("mx/depthwise-5x5", mx, {192, 1, 5, 5}, "c.weight", {}, 0,
            "depthwise-conv [O, 1, k...] [192, 1, 5, 5]: 25 values per output channel, fewer than one MX "
            "block of 32");
        row("mx/depthwise-3x3", mx, {48, 1, 3, 3}, "c.weight", {}, 0,
            "[48, 1, 3, 3]: 9 values per output channel, fewer than one MX block of 32");
        row("mx/pointwise-24-short-block", mx, {96, 24, 1, 1}, "c.weight", {96, 24, 1, 1}, 1, "");
        row("mx/one-value", mx, {1, 1, 1, 1}, "c.weight", {}, 0, "1 value per output channel");
        row("mx/keras-conv-short-block", mx, {3, 3, 16, 32}, "conv2d/kernel:0", {3, 3, 16, 32}, 2, "");
        row("mx/linear-short-block-as-before", mx, {64, 24}, "fc.weight", {64, 24}, 1, "");
        row("nvfp4/depthwise-4x4", nv, {24, 1, 4, 4}, "c.weight", {24, 16}, 1, "");
        row("nvfp4/conv-24-channels-2x2", nv, {64, 24, 2, 2}, "c.weight", {64, 96}, 1, "");
        row("nvfp4/depthwise-3x3", nv, {48, 1, 3, 3}, "c.weight", {}, 0,
            "[48, 1, 3, 3]: 9 values per output channel, fewer than one NVFP4 block of 16");
        row("nvfp4/depthwise-5x5", nv, {192, 1, 5, 5}, "c.weight", {}, 0,
            "[192, 1, 5, 5]: as [192, 25] (the kernel flattened): nvfp4: NVFP4 needs block sizes that "
            "divide");
        row("g16/depthwise-5x5", roleGroupSpec(16), {8, 1, 5, 5}, "c.weight", {8, 25}, 1, "");
        row("g32/depthwise-5x5", roleGroupSpec(32), {8, 1, 5, 5}, "c.weight", {}, 0,
            "25 values per output channel, fewer than one group of 32");
        row("tensorrt-block-1x32/conv", trt, {64, 32, 3, 3}, "c.weight", {64, 288}, -1, "");
    }
    void planForRole() {
        QFETCH(QuantSpec, spec);
        QFETCH(Shape, shape);
        QFETCH(QString, name);
        QFETCH(Shape, planShape);
        QFETCH(int, axis);
        QFETCH(QString, refusal);
        const RoleAxes role = weightRole(name.toStdString(), shape);
        if (planShape.empty()) {
            try {
                (void)ql::planForRole(spec, shape, role);
                QFAIL("planned; a refusal was expected");
            } catch (const QuantError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(refusal), e.what());
            }
            return;
        }
        const ResolvedSpec plan = ql::planForRole(spec, shape, role);
        QCOMPARE(plan.shape, planShape);
        QCOMPARE(plan.ownShape(), shape);
        QCOMPARE(plan.viewed(), planShape != shape);
        if (axis >= 0) QCOMPARE(plan.spec.axes, std::vector<int>{axis});
        if (plan.viewed())
            QVERIFY2(QString::fromStdString(plan.notes).contains(QStringLiteral("quantized as ")),
                     plan.notes.c_str());
        // The plan as a report or an export writes it comes back the same.
        const ResolvedSpec back = planFromJson(toJson(plan));
        QCOMPARE(back.shape, plan.shape);
        QCOMPARE(back.tensorShape, plan.tensorShape);
        QCOMPARE(back.scaleShape, plan.scaleShape);
    }

    // The view is the tensor's own values in their order: per-channel codes through [O, I*kh*kw] are the
    // scalar reference's on [O, I, kh, kw] with a scale per output channel, under the same arithmetic.
    void viewCodesAreTheTensorsOwn() {
        const Shape shape{12, 5, 3, 3};
        const std::vector<float> x = gaussian(elementCount(shape), 7);
        const QuantSpec ascend = roleSpec(Preset::AscendQuant, Target::Int8);
        const ResolvedSpec viewed = ql::planForRole(ascend, shape, weightRole("c.weight", shape));
        QVERIFY(viewed.viewed());
        QuantSpec own = ascend;
        own.preset = Preset::Custom;
        own.custom = viewed.convention;
        own.axes = {0};
        const ResolvedSpec asItIs = resolveSpec(own, shape);
        const QuantParams pv = calibrate(viewed, x), po = calibrate(asItIs, x);
        QCOMPARE(pv.scales.size(), std::size_t{12});
        QCOMPARE(pv.scales, po.scales);
        QVERIFY(quantizeReference(viewed, pv, x) == quantizeReference(asItIs, po, x));
    }

    // A against B on a conv: A (ascend-quant) through its view, B (torch) as it is, compared code by code
    // in the tensor's own order.
    void comparePresetsOnAConv() {
        JobRequest request =
            qltest::jobRequest(m_model.toStdString(), roleSpec(Preset::AscendQuant, Target::Int8));
        request.roleAxes = true;
        request.compare.kind = CompareWith::Kind::Preset;
        request.compare.preset = Preset::Torch;
        const TensorOutcome o = runTensorJob(request, "conv.weight");
        QVERIFY(o.a.report.plan.viewed());
        QVERIFY(o.b && !o.b->report.plan.viewed());
        QVERIFY(o.comparison);
        QCOMPARE(o.comparison->count, std::int64_t{16 * 27});
    }

    // quantize --all without an axis on the conv model: each tensor's layout, or its reason.
    void cli_data() {
        QTest::addColumn<QStringList>("spec");
        QTest::addColumn<QStringList>("viewed");  // quantized through the view
        QTest::addColumn<QStringList>("asItIs");  // quantized as they are
        QTest::addColumn<QStringList>("refused"); // name=part of the reason
        QTest::addRow("ascend-quant")
            << split("--preset ascend-quant --dtype int8")
            << QStringList{QStringLiteral("conv.weight"), QStringLiteral("wide.weight"),
                           QStringLiteral("dw5.weight"),  QStringLiteral("dw3.weight"),
                           QStringLiteral("pw.weight"),   QStringLiteral("deep.weight"),
                           QStringLiteral("dw7.weight"),  QStringLiteral("conv1d.weight")}
            << QStringList{} << QStringList{};
        QTest::addRow("mx") << split("--preset mx --dtype fp4-e2m1")
                            << QStringList{QStringLiteral("dw7.weight"), QStringLiteral("conv1d.weight")}
                            << QStringList{QStringLiteral("pw.weight"), QStringLiteral("deep.weight"),
                                           QStringLiteral("wide.weight"), QStringLiteral("conv.weight")}
                            << QStringList{
                                   QStringLiteral("dw5.weight=[192, 1, 5, 5]: 25 values per output channel, "
                                                  "fewer than one MX block of 32"),
                                   QStringLiteral("dw3.weight=9 values per output channel")};
        QTest::addRow("nvfp4") << split("--preset nvfp4") << QStringList{QStringLiteral("wide.weight")}
                               << QStringList{QStringLiteral("pw.weight"), QStringLiteral("deep.weight")}
                               << QStringList{
                                      QStringLiteral("dw3.weight=fewer than one NVFP4 block of 16"),
                                      QStringLiteral("dw5.weight=as [192, 25] (the kernel flattened)"),
                                      QStringLiteral("conv.weight=as [16, 27]")};
    }
    void cli() {
        QFETCH(QStringList, spec);
        QFETCH(QStringList, viewed);
        QFETCH(QStringList, asItIs);
        QFETCH(QStringList, refused);
        const QString report =
            m_dir.filePath(QString::fromLatin1(QTest::currentDataTag()) + QStringLiteral(".json"));
        const auto q = runCli(QStringList{QStringLiteral("quantize"), m_model, QStringLiteral("--all")} +
                                  spec + QStringList{QStringLiteral("--report"), report},
                              m_dir.path());
        QVERIFY2(q.code == 0, q.err.constData());
        const nlohmann::json r = readJson(report);
        for (const QString& n : viewed) {
            const auto* t = tensorNamed(r, n.toStdString());
            QVERIFY2(t && !t->contains("passed_through") && !t->contains("error"), qPrintable(n));
            const auto& s = (*t)["spec"];
            QVERIFY2(s.contains("tensor_shape"), qPrintable(n));
            QCOMPARE((*t)["shape"], s["tensor_shape"]); // the report's shape is the tensor's own
            const Shape own = (*t)["shape"].get<Shape>();
            QCOMPARE(s["shape"].get<Shape>(), (Shape{own[0], elementCount(own) / own[0]}));
            QVERIFY2(s["notes"].get<std::string>().find(
                         "quantized as " + toString(s["shape"].get<Shape>())) != std::string::npos,
                     s.dump().c_str());
            // The table beside the report says so too.
            QVERIFY2(q.out.contains((toString(own) + " as " + toString(s["shape"].get<Shape>())).c_str()),
                     q.out.constData());
        }
        for (const QString& n : asItIs) {
            const auto* t = tensorNamed(r, n.toStdString());
            QVERIFY2(t && !t->contains("passed_through") && !t->contains("error"), qPrintable(n));
            QVERIFY2(!(*t)["spec"].contains("tensor_shape"), qPrintable(n));
            QCOMPARE((*t)["spec"]["shape"], (*t)["shape"]);
        }
        for (const QString& entry : refused) {
            const QString n = entry.section(QLatin1Char('='), 0, 0), why = entry.section(QLatin1Char('='), 1);
            const auto* t = tensorNamed(r, n.toStdString());
            QVERIFY2(t && t->contains("passed_through"), qPrintable(n));
            const QString reason = QString::fromStdString((*t)["passed_through"].get<std::string>());
            QVERIFY2(reason.contains(why), qPrintable(reason));
            // It speaks of the kernel flattened, not only of the one input channel as it is.
            QVERIFY2(reason.contains(QStringLiteral("per output channel")) ||
                         reason.contains(QStringLiteral("(the kernel flattened)")),
                     qPrintable(reason));
        }
        const auto* bias = tensorNamed(r, "conv.bias");
        QVERIFY(bias && bias->contains("passed_through")); // weights only
    }

    // An explicit axis applies as given: no view, and the reason is the axis's.
    void explicitAxisAppliesAsGiven() {
        const auto q = runCli({QStringLiteral("quantize"), m_model, QStringLiteral("--tensor"),
                               QStringLiteral("conv.weight"), QStringLiteral("--preset"),
                               QStringLiteral("ascend-quant"), QStringLiteral("--axis"), QStringLiteral("0")},
                              m_dir.path());
        QCOMPARE(q.code, 1);
        QVERIFY2(q.err.contains("one of the last two dimensions"), q.err.constData());
    }

    // Every format a viewed tensor is exported in re-opens as the tensor's own shape, with the job's
    // codes, and diff --requantize against the original finds no code, scale or zero point apart.
    void exportRoundTrip_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QStringList>("spec");
        const std::pair<const char*, const char*> families[] = {
            {"ascend-quant-int8", "--preset ascend-quant --dtype int8"},
            {"ascend-quant-int4", "--preset ascend-quant --dtype int4"},
            {"pypto-int8", "--preset pypto --dtype int8"},
            {"mx-fp4", "--preset mx --dtype fp4-e2m1"},
            {"mx-fp8", "--preset mx --dtype fp8-e4m3"},
            {"nvfp4", "--preset nvfp4"},
            {"tensorrt-int4-block", "--preset tensorrt --dtype int4 --scheme block --block 1,32"},
        };
        for (const auto& [name, args] : families) {
            QTest::newRow((std::string(name) + " native").c_str()) << QStringLiteral("native") << split(args);
#ifdef QUANTLENS_HAS_HDF5
            QTest::newRow((std::string(name) + " hdf5").c_str()) << QStringLiteral("hdf5") << split(args);
#endif
        }
    }

    // compressed-tensors' loaders decompress into the module's own weight: a viewed tensor is kept in a
    // compressed-tensors export, with the reason, and the rest (the Linear) is written.
    void compressedTensorsKeepsAView() {
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("ct")));
        const QString out = m_dir.filePath(QStringLiteral("ct/q.safetensors"));
        const QString report = m_dir.filePath(QStringLiteral("ct/report.json"));
        const auto q = runCli({QStringLiteral("quantize"), m_model, QStringLiteral("--all"),
                               QStringLiteral("--preset"), QStringLiteral("nvfp4"), QStringLiteral("--out"),
                               out, QStringLiteral("--report"), report},
                              m_dir.path());
        QVERIFY2(q.code == 0, q.err.constData());
        const nlohmann::json r = readJson(report);
        const auto* wide = tensorNamed(r, "wide.weight");
        QVERIFY(wide && wide->contains("passed_through"));
        const std::string why = (*wide)["passed_through"].get<std::string>();
        QVERIFY2(why.find("quantized as its view [64, 96] of [64, 24, 2, 2]") != std::string::npos,
                 why.c_str());
        QVERIFY2(why.find("compressed-tensors") != std::string::npos, why.c_str());
        const auto exported = openTensorSource(out.toStdString());
        const TensorInfo* kept = exported->find("wide.weight"); // as it is, in its own shape
        QVERIFY(kept && kept->shape == (Shape{64, 24, 2, 2}));
        const std::vector<ExportedEntry> entries = exportedEntries(*exported);
        QCOMPARE(entries.size(), std::size_t{1});
        QCOMPARE(entries.front().name, std::string("fc.weight"));
    }

    void exportRoundTrip() {
        QFETCH(QString, format);
        QFETCH(QStringList, spec);
        const qltest::CliExport e = qltest::exportWholeModel(
            m_model, m_dir.path(), QString::fromLatin1(QTest::currentDataTag()), format, spec);
        QVERIFY2(e.run.code == 0, e.run.err.constData());
        const QString& out = e.out;

        const auto exported = openTensorSource(out.toStdString());
        const std::vector<ExportedEntry> entries = exportedEntries(*exported);
        const auto source = openTensorSource(m_model.toStdString());
        int viewed = 0;
        for (const ExportedEntry& entry : entries) {
            const QuantizedTensor back = readExported(*exported, entry);
            const TensorInfo* info = source->find(entry.name);
            QVERIFY(info);
            QCOMPARE(back.plan.ownShape(), info->shape);
            viewed += back.plan.viewed();
            if (entry.description.value("packing", std::string()) == "none") // a code per element: as it is
                QCOMPARE(exported->find(entry.parts.front())->shape, info->shape);
            // The job's own codes for this tensor, planned by the same rule.
            JobRequest request = qltest::jobRequest(m_model.toStdString(), back.plan.spec);
            request.spec.axes.clear();
            request.roleAxes = true;
            ModelJobOptions options;
            options.keepCodes = true;
            const ModelOutcome outcome = runModelJob(request, {entry.name}, options);
            QCOMPARE(outcome.quantized.size(), std::size_t{1});
            const QuantizedTensor& ours = outcome.quantized.front();
            QCOMPARE(back.plan.shape, ours.plan.shape);
            QCOMPARE(back.plan.tensorShape, ours.plan.tensorShape);
            QVERIFY2(back.codes == ours.codes, entry.name.c_str());
            const std::vector<float> values = exportedValues(back);
            QCOMPARE(values.size(), static_cast<std::size_t>(elementCount(info->shape)));
        }
        QVERIFY2(viewed > 0, "no tensor of the export was viewed");

        const QString report = QFileInfo(out).dir().filePath(QStringLiteral("diff.json"));
        const auto d =
            runCli(QStringList{QStringLiteral("diff"), m_model, out, QStringLiteral("--requantize")} + spec +
                       QStringList{QStringLiteral("--report"), report},
                   m_dir.path());
        QVERIFY2(d.code == 0, d.err.constData());
        const nlohmann::json r = readJson(report);
        int compared = 0;
        for (const auto& t : r["tensors"]) {
            if (t["matched"] != "quantlens-export") continue;
            QVERIFY2(!t.contains("error") && t.contains("codes"), t.dump().c_str());
            const Shape shape = t["shape"].get<Shape>();
            QCOMPARE(shape, source->find(t["name"].get<std::string>())->shape); // the tensor's own shape
            QCOMPARE(t["codes"]["compared"].get<std::int64_t>(), elementCount(shape));
            QCOMPARE(t["codes"]["code_mismatches"].get<std::int64_t>(), std::int64_t{0});
            QCOMPARE(t["codes"]["code_scale_mismatches"].get<std::int64_t>(), std::int64_t{0});
            QCOMPARE(t["codes"]["code_zero_point_mismatches"].get<std::int64_t>(), std::int64_t{0});
            ++compared;
        }
        QCOMPARE(compared, static_cast<int>(entries.size()));
    }

    // PaddleOCR's detector (the npm model tst_real_model converts into the build folder): ascend-quant
    // keeps none of its conv weights, each viewed as [O, I*kh*kw]; MX refuses only depthwise kernels
    // too small for one block, saying how many values they have.
    void paddleDetector() {
        const QString model =
            QStringLiteral(QUANTLENS_BINARY_DIR "/io-real-models/ch_PP-OCRv4_det_infer.safetensors");
        if (!QFileInfo::exists(model))
            QSKIP("the PaddleOCR models are converted by tst_real_model; run it first");
        const QString report = m_dir.filePath(QStringLiteral("det-ascend.json"));
        const auto q =
            runCli({QStringLiteral("quantize"), model, QStringLiteral("--all"), QStringLiteral("--preset"),
                    QStringLiteral("ascend-quant"), QStringLiteral("--report"), report},
                   m_dir.path());
        QVERIFY2(q.code == 0, q.err.constData());
        int convs = 0, viewed = 0;
        const nlohmann::json ascendReport = readJson(report);
        for (const auto& t : ascendReport["tensors"]) {
            if (t["shape"].size() != 4) continue; // (its conv biases stored as [1, C, 1, 1] too)
            ++convs;
            QVERIFY2(!t.contains("passed_through") && !t.contains("error"), t.dump().substr(0, 400).c_str());
            viewed += t["spec"].contains("tensor_shape");
        }
        QCOMPARE(convs, 66); // each one the operator kept before
        QCOMPARE(viewed, convs);
        QVERIFY(!q.out.contains("the scale axis must be one of the last two"));
        QVERIFY(!q.err.contains("the scale axis must be one of the last two"));

        const QString mxReport = m_dir.filePath(QStringLiteral("det-mx.json"));
        const auto m =
            runCli({QStringLiteral("quantize"), model, QStringLiteral("--all"), QStringLiteral("--preset"),
                    QStringLiteral("mx"), QStringLiteral("--report"), mxReport},
                   m_dir.path());
        QVERIFY2(m.code == 0, m.err.constData());
        const nlohmann::json mxTensors = readJson(mxReport);
        for (const auto& t : mxTensors["tensors"]) {
            const std::string why = t.value("passed_through", std::string());
            if (t["shape"].size() != 4 || why.empty()) continue;
            QVERIFY2(why.find("values per output channel, fewer than one MX block of 32") !=
                             std::string::npos ||
                         why.find("value per output channel") != std::string::npos,
                     why.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestWeightViews)
#include "tst_weight_views.moc"
