// The QDQ export of a weight quantized through its 2-D view (quant/weight_view.h): a conv [O, I, 3, 3]
// as [O, I*9], a Keras kernel [3, 3, I, O] as [3*3*I, O]. DequantizeLinear holds the codes in the
// weight's own shape with the view's channel scales on that shape's matching axis: numpy's reading of
// the file (tests/scripts/qdq_view_fixtures.py) and QuantLens' ONNX reader both give x̂ bit for bit,
// and `diff --requantize` with the same spec on the tensor as it is finds every code. Views that leave
// DequantizeLinear no form (scales or blocks across the flattened kernel) are refused with the reason,
// and so are the CLI's role views under presets whose layout needs them (ascend-quant, TensorRT blocks).
#include "base/error.h"
#include "cli_test_util.h"
#include "io/export_onnx_qdq.h"
#include "io/onnx_source.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "job/spec_options.h"
#include "quant/calibration.h"
#include "quant/reference.h"
#include "quant/weight_view.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

using namespace ql;
using namespace qltest;

namespace {

// The SPEC flags as the CLI reads them, through the one table both front ends use.
SpecOptions optionsOf(const QString& flags) {
    SpecOptions o;
    const QStringList words = flags.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    for (qsizetype i = 0; i < words.size(); ++i) {
        const auto& fields = specFields();
        const auto f = std::find_if(fields.begin(), fields.end(),
                                    [&](const SpecField& s) { return s.flag == words[i].toStdString(); });
        if (f == fields.end() || (!f->on && i + 1 == words.size()))
            throw std::invalid_argument("not a spec flag with its value: " + words[i].toStdString());
        if (f->on)
            o.*(f->on) = true;
        else if (f->text)
            o.*(f->text) = words[++i].toStdString();
        else
            o.*(f->count) = words[++i].toLongLong();
    }
    return o;
}

// `name` of the model quantized by the scalar reference through `view`.
QuantizedTensor quantizeViewed(const TensorSource& model, const std::string& name, const QString& flags,
                               const Shape& view) {
    const std::vector<float> x = model.load(name).toFloatVector();
    QuantizedTensor q;
    q.name = name;
    q.plan = resolveViewed(specFromOptions(optionsOf(flags)), model.find(name)->shape, view);
    q.params = calibrate(q.plan, x);
    q.codes = quantizeReference(q.plan, q.params, x);
    return q;
}

// The first element whose bits differ, or -1 when `a` and `b` are the same floats bit for bit.
qsizetype firstBitDifference(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return static_cast<qsizetype>(std::min(a.size(), b.size()));
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i]))
            return static_cast<qsizetype>(i);
    return -1;
}

std::vector<float> readFloats(const std::string& path) {
    const std::string bytes = readFile(path);
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

} // namespace

class TestQdqViews : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_model; // two 3x3 convs: conv.weight [6, 4, 3, 3], k.kernel [3, 3, 6, 5]

    QString path(const QString& name) const { return m_dir.filePath(name); }

    CliRun cli(const QStringList& args) { return runCli(args, m_dir.path()); }
    static QByteArray said(const CliRun& r) { return r.out + r.err; }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_model = path(QStringLiteral("conv.onnx"));
        QString err;
        runPython({pythonScript("qdq_view_fixtures.py"), QStringLiteral("model"), m_model}, &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // Channel scales on the view's output axis: DequantizeLinear's axis is that axis of the own shape.
    void viewedPerChannel_data() {
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<std::vector<std::int64_t>>("view");
        QTest::addColumn<QString>("spec"); // SPEC flags without the axis
        QTest::addColumn<int>("viewAxis"); // the scales' axis on the view
        QTest::addColumn<int>("axis");     // DequantizeLinear's, on the own shape
        QTest::addColumn<std::int64_t>("scales");
        QTest::addRow("conv-as-O-by-I*9/torch-int8")
            << QStringLiteral("conv.weight") << std::vector<std::int64_t>{6, 36}
            << QStringLiteral("--preset torch") << 0 << 0 << std::int64_t{6};
        QTest::addRow("conv-as-O-by-I*9/aclnn-uint8-zero-point")
            << QStringLiteral("conv.weight") << std::vector<std::int64_t>{6, 36}
            << QStringLiteral("--preset aclnn-quantize --dtype uint8 --asymmetric") << 0 << 0
            << std::int64_t{6};
        QTest::addRow("keras-as-k*I-by-O/tensorrt-int8")
            << QStringLiteral("k.kernel") << std::vector<std::int64_t>{54, 5}
            << QStringLiteral("--preset tensorrt") << 1 << 3 << std::int64_t{5};
    }
    void viewedPerChannel() {
        QFETCH(QString, tensor);
        QFETCH(std::vector<std::int64_t>, view);
        QFETCH(QString, spec);
        QFETCH(int, viewAxis);
        QFETCH(int, axis);
        QFETCH(std::int64_t, scales);
        const std::string name = tensor.toStdString();
        const auto model = openTensorSource(m_model.toStdString());
        const Shape own = model->find(name)->shape;
        const QuantizedTensor q = quantizeViewed(
            *model, name, spec + QStringLiteral(" --axis %1").arg(viewAxis), Shape(view.begin(), view.end()));
        QVERIFY(q.plan.viewed());
        QCOMPARE(q.plan.ownShape(), own);
        QCOMPARE(q.plan.scaleCount, scales);
        const std::vector<float> xhat = dequantizeReference(q.plan, q.params, q.codes);

        QCOMPARE(onnxQdqRefusals(m_model.toStdString())(q), std::string());
        const QString tag =
            QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char('/'), QLatin1Char('_'));
        const QString out = path(tag + QStringLiteral(".onnx"));
        exportOnnxQdq(out.toStdString(), {q}, m_model.toStdString());

        // numpy: the node's attributes and shapes, and (x - zero_point) * scale along `axis`.
        const QString read = path(tag);
        QVERIFY(QDir().mkpath(read));
        QString err;
        runPython({pythonScript("qdq_view_fixtures.py"), QStringLiteral("read"), out, read}, &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const auto j = nlohmann::json::parse(readFile(read.toStdString() + "/qdq.json"));
        QCOMPARE(j["weights"].size(), std::size_t{1});
        const auto& w = j["weights"][name];
        QCOMPARE(w["axis"].get<int>(), axis);
        QCOMPARE(w["scale_dims"], nlohmann::json::array({scales}));
        QCOMPARE(w["codes_dims"], nlohmann::json(own));
        QCOMPARE(j["opset"].get<int>(), 13); // per-axis DequantizeLinear: the model's own opset
        QCOMPARE(firstBitDifference(readFloats(read.toStdString() + "/" + name + ".f32"), xhat),
                 qsizetype{-1});

        // QuantLens' reader: the same scheme, and x̂ as the weight's values.
        const auto back = openTensorSource(out.toStdString());
        const QdqWeight* dq = findQdqWeight(*back, name);
        QVERIFY(dq);
        QCOMPARE(QString::fromStdString(dq->schemeText()), QStringLiteral("per-axis %1").arg(axis));
        const Tensor values = back->load(name);
        QCOMPARE(values.shape(), own);
        QCOMPARE(values.dtype(), DType::F32);
        QCOMPARE(firstBitDifference(values.toFloatVector(), xhat), qsizetype{-1});

        // The spec on the tensor as it is, scales on the own axis: every code and scale the export's.
        const QString report = path(tag + QStringLiteral(".diff.json"));
        const CliRun r = cli(QStringList{QStringLiteral("diff"), m_model, out, QStringLiteral("--tensor"),
                                         tensor, QStringLiteral("--requantize"), QStringLiteral("--axis"),
                                         QString::number(axis), QStringLiteral("--report"), report} +
                             spec.split(QLatin1Char(' ')));
        QVERIFY2(r.code == 0, said(r).constData());
        const auto d = nlohmann::json::parse(readFile(report.toStdString()));
        QCOMPARE(d["tensors"].size(), std::size_t{1});
        const auto& codes = d["tensors"][0]["codes"];
        QCOMPARE(codes["compared"].get<std::int64_t>(), elementCount(own));
        QCOMPARE(codes["code_mismatches"].get<std::int64_t>(), std::int64_t{0});
        QCOMPARE(codes["code_scale_mismatches"].get<std::int64_t>(), std::int64_t{0});
    }

    // A view whose scales or blocks run across the flattened kernel has no DequantizeLinear form on the
    // weight's own shape: refused with the reason, nothing written.
    void viewedRefusals_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("message");
        QTest::addRow("scales-along-the-flattened-kernel")
            << QStringLiteral("--preset torch --axis 1")
            << QStringLiteral("scales along axis 1 of its view [6, 36] are along no axis of its own shape "
                              "[6, 4, 3, 3]");
        QTest::addRow("blocks-across-the-kernel")
            << QStringLiteral("--preset tensorrt --dtype int4 --scheme block --block 4 --axis 1")
            << QStringLiteral("blocks along the kernel flattened into [6, 36]: DequantizeLinear blocks one "
                              "axis of the weight's own shape [6, 4, 3, 3]");
    }
    void viewedRefusals() {
        QFETCH(QString, spec);
        QFETCH(QString, message);
        const auto model = openTensorSource(m_model.toStdString());
        const QuantizedTensor q = quantizeViewed(*model, "conv.weight", spec, {6, 36});
        QCOMPARE(QString::fromStdString(onnxQdqRefusals(m_model.toStdString())(q)), message);
        const std::string out = path(QStringLiteral("refused.onnx")).toStdString();
        try {
            exportOnnxQdq(out, {q}, m_model.toStdString());
            QFAIL("the export was written");
        } catch (const FileError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
        QVERIFY(!QFileInfo::exists(QString::fromStdString(out)));
    }

    // The CLI's own path: presets whose layout fits a 3x3 conv only as [O, I*9] plan conv.weight through
    // that view, and its QDQ export is refused with the reason DequantizeLinear cannot store it.
    void roleViewsFromCli_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("message");
        // Per-channel scales on one of the last two axes only; aclnnAscendQuantV3 multiplies by 1/step.
        QTest::addRow("ascend-quant") << QStringLiteral("--preset ascend-quant")
                                      << QStringLiteral("its scale is an inverse step (x̂ = (q - zp) / s) and "
                                                        "DequantizeLinear multiplies by its scale");
        // TensorRT blocks only the last two axes: the reduction I*9 of the view.
        QTest::addRow("tensorrt-int4-block")
            << QStringLiteral("--preset tensorrt --dtype int4 --scheme block --block 4")
            << QStringLiteral("blocks along the kernel flattened into [6, 36]");
    }
    void roleViewsFromCli() {
        QFETCH(QString, spec);
        QFETCH(QString, message);
        const QStringList run = QStringList{QStringLiteral("quantize"), m_model, QStringLiteral("--tensor"),
                                            QStringLiteral("conv.weight"), QStringLiteral("-q")} +
                                spec.split(QLatin1Char(' '));
        const CliRun planned = cli(run);
        QVERIFY2(planned.code == 0, said(planned).constData());
        QVERIFY2(planned.out.contains("conv.weight [6, 4, 3, 3] as [6, 36]"), planned.out.constData());
        const QString out = path(QStringLiteral("role_view.onnx"));
        const CliRun exported = cli(run + QStringList{QStringLiteral("--out"), out});
        QCOMPARE(exported.code, 1);
        QVERIFY2(QString::fromUtf8(said(exported)).contains(message), said(exported).constData());
        QVERIFY(!QFileInfo::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestQdqViews)
#include "tst_qdq_views.moc"
