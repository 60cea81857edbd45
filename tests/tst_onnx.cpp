// ONNX models read natively: every element type from raw_data and from the typed fields, subgraph
// and Constant tensors named as scripts/convert_onnx.py names them, external data inside the model's
// folder (and refused outside it), QDQ weights dequantized bit for bit as numpy computes
// DequantizeLinear, and malformed files refused with the file, the tensor and the reason. The models
// and the expected bytes come from tests/scripts/onnx_fixtures.py (python3 with onnx and numpy).
#include "base/error.h"
#include "io/onnx_source.h"
#include "io_test_util.h"
#include "job/tensor_diff.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace ql;
using namespace qltest;

class TestOnnx : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    nlohmann::json m_manifest;

    std::string file(const std::string& name) const {
        return m_dir.filePath(QString::fromStdString(name)).toStdString();
    }
    std::unique_ptr<TensorSource> open(const std::string& name) const { return openTensorSource(file(name)); }
    // Rows of one manifest list, named by `key`; in _data() functions, so every table starts the same.
    void rows(const char* list, const char* key) {
        QTest::addColumn<int>("index");
        if (m_manifest.is_null()) QSKIP("no fixtures (python3 with onnx and numpy is not available)");
        for (std::size_t i = 0; i < m_manifest[list].size(); ++i)
            QTest::addRow("%s", m_manifest[list][i][key].get<std::string>().c_str()) << static_cast<int>(i);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!pythonHas(QStringLiteral("onnx, numpy"))) QSKIP("python3 with onnx and numpy is not available");
        QString err;
        runPython({pythonScript("onnx_fixtures.py"), m_dir.path()}, &err, 300000);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        m_manifest = nlohmann::json::parse(readFile(file("manifest.json")));
    }

    // Listing (name, dtype, shape, order) and bytes of every tensor, as numpy / convert_onnx.py wrote them.
    void tensors_data() {
        QTest::addColumn<QString>("model");
        if (m_manifest.is_null()) QSKIP("no fixtures");
        for (const auto& [model, list] : m_manifest["tensors"].items())
            QTest::addRow("%s", model.c_str()) << QString::fromStdString(model);
    }
    void tensors() {
        QFETCH(QString, model);
        const auto src = open(model.toStdString());
        const auto& expected = m_manifest["tensors"][model.toStdString()];
        QCOMPARE(src->tensors().size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const auto& want = expected[i];
            const std::string name = want["name"].get<std::string>();
            const TensorInfo& info = src->tensors()[i];
            QCOMPARE(info.name, name);
            QCOMPARE(std::string(nameOf(info.dtype)), want["dtype"].get<std::string>());
            QCOMPARE(info.shape, want["shape"].get<Shape>());
            const Tensor t = src->load(name);
            QCOMPARE(t.byteSize(), info.byteSize);
            QCOMPARE(toHex(t), want["hex"].get<std::string>());
        }
    }

    // What the listing leaves out (a STRING initializer) is said, with its type.
    void unreadTypesAreSaid() {
        if (m_manifest.is_null()) QSKIP("no fixtures");
        const auto src = open("plain.onnx");
        const std::vector<UnlistedEntry> left = src->unlisted();
        QCOMPARE(left.size(), std::size_t{1});
        QCOMPARE(left[0].name, std::string("text"));
        QCOMPARE(left[0].reason, std::string("ONNX data type STRING is not one QuantLens reads"));
    }

    void rowsAreSlicesOfTheWhole() {
        if (m_manifest.is_null()) QSKIP("no fixtures");
        const auto src = open("plain.onnx");
        for (const char* name : {"raw.f32", "typed.bf16", "raw.int4"}) {
            const Tensor whole = src->load(name);
            const Tensor rows = src->loadRows(name, 1, 1);
            const std::size_t rowBytes = whole.byteSize() / static_cast<std::size_t>(whole.shape()[0]);
            QCOMPARE(rows.shape()[0], std::int64_t{1});
            QCOMPARE(toHex(rows), toHex(whole.data() + rowBytes, rowBytes));
        }
        QVERIFY_THROWS_EXCEPTION(FileError, src->loadRows("raw.f32", 2, 2));
        QVERIFY_THROWS_EXCEPTION(FileError, src->load("text")); // strings are not listed
    }

    void externalData() {
        if (m_manifest.is_null()) QSKIP("no fixtures");
        for (const auto& model : m_manifest["external"]["ok"]) {
            const auto src = open(model.get<std::string>());
            QCOMPARE(toHex(src->load("ext.w")), m_manifest["external"]["hex"].get<std::string>());
            QCOMPARE(src->files().size(), std::size_t{2}); // the model and weights.bin, never written over
            QVERIFY(QString::fromStdString(src->files()[1]).endsWith(QStringLiteral("weights.bin")));
            src->release("ext.w");
            QCOMPARE(toHex(src->loadRows("ext.w", 3, 1)),
                     m_manifest["external"]["hex"].get<std::string>().substr(72));
        }
    }

    // Each bad file: a FileError naming the file, the tensor (when one is at fault) and the reason.
    void refused_data() { rows("bad", "file"); }
    void refused() {
        QFETCH(int, index);
        const auto& bad = m_manifest["bad"][static_cast<std::size_t>(index)];
        const std::string path = file(bad["file"].get<std::string>());
        try {
            openTensorSource(path);
            QFAIL("opened without an error");
        } catch (const FileError& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.startsWith(QString::fromStdString(path)), qPrintable(message));
            QVERIFY2(message.contains(QString::fromStdString(bad["tensor"].get<std::string>())),
                     qPrintable(message));
            QVERIFY2(message.contains(QString::fromStdString(bad["reason"].get<std::string>())),
                     qPrintable(message));
        }
    }

    // DequantizeLinear outputs: values bit for bit, and the parts they come from.
    void qdq_data() { rows("qdq", "name"); }
    void qdq() {
        QFETCH(int, index);
        const auto& want = m_manifest["qdq"][static_cast<std::size_t>(index)];
        const std::string name = want["name"].get<std::string>();
        const auto src = OnnxSource::open(file("qdq.onnx"));
        const TensorInfo* info = src->find(name);
        QVERIFY(info);
        QCOMPARE(info->dtype, DType::F32);
        QCOMPARE(info->shape, want["shape"].get<Shape>());
        QCOMPARE(toHex(src->load(name)), want["hex"].get<std::string>());
        const QdqWeight* q = src->qdq(name);
        QVERIFY(q);
        QCOMPARE(findQdqWeight(*src, name), q);
        QCOMPARE(q->codes, want["codes"].get<std::string>());
        QCOMPARE(q->scale, want["scale"].get<std::string>());
        QCOMPARE(q->zeroPoint, want["zero_point"].get<std::string>());
        QCOMPARE(q->schemeText(), want["scheme"].get<std::string>());
        QCOMPARE(q->axis, want["axis"].get<int>());
        QCOMPARE(q->blockSize, want["block"].get<std::int64_t>());
        QCOMPARE(toHex(src->qdqCodes(name)), want["codes_hex"].get<std::string>());
        QCOMPARE(toHex(src->qdqScales(name)), want["scale_hex"].get<std::string>());
        const auto zero = src->qdqZeroPoints(name);
        QCOMPARE(zero ? toHex(*zero) : std::string(), want["zero_point_hex"].get<std::string>());
        QVERIFY(info->location.find(q->schemeText()) != std::string::npos);
        // Rows dequantize only what they cover, with the same values.
        if (info->shape.size() == 2) {
            const std::string hex = want["hex"].get<std::string>();
            const std::size_t rowHex = hex.size() / static_cast<std::size_t>(info->shape[0]);
            QCOMPARE(toHex(src->loadRows(name, 1, info->shape[0] - 1)), hex.substr(rowHex));
        }
        QVERIFY(!src->qdq(q->codes));
        QVERIFY_THROWS_EXCEPTION(FileError, src->qdqCodes(q->codes));
    }

    // `diff float.onnx qdq.onnx` pairs W with onnxruntime's name for its dequantized form.
    void diffPairsFloatWithQdq() {
        if (m_manifest.is_null()) QSKIP("no fixtures");
        const auto fl = open("float.onnx"), qdq = open("qdq.onnx");
        const TensorMatch m = matchTensors(*fl, *qdq);
        QCOMPARE(m.pairs.size(), std::size_t{1});
        QCOMPARE(m.pairs[0].b, std::string("W_DequantizeLinear_Output"));
        QCOMPARE(m.pairs[0].how, std::string("qdq"));
        const TensorDiff d = diffTensors(*fl, *qdq, m.pairs[0]);
        QVERIFY2(d.failure.empty(), d.failure.c_str());
        QCOMPARE(d.maxUlp, std::int64_t{0}); // the float model holds exactly what DequantizeLinear computes
    }

    // A tensor at an odd byte of its external file quantizes as the aligned one does (the job copies
    // it to aligned storage: the kernels read whole elements).
    void misalignedExternalDataQuantizes() {
#ifndef QUANTLENS_CLI
        QSKIP("quantlens-cli is not built");
#else
        if (m_manifest.is_null()) QSKIP("no fixtures");
        std::vector<nlohmann::json> reports;
        for (const char* model : {"ext_ok/model.onnx", "ext_odd/model.onnx"}) {
            QProcess p;
            p.start(QStringLiteral(QUANTLENS_CLI),
                    {QStringLiteral("quantize"), m_dir.filePath(QString::fromLatin1(model)),
                     QStringLiteral("--all"), QStringLiteral("-q"), QStringLiteral("--report"),
                     m_dir.filePath(QStringLiteral("r.json"))});
            QVERIFY(p.waitForFinished(60000));
            QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
            reports.push_back(nlohmann::json::parse(readFile(file("r.json")))["tensors"][0]["stats"]);
        }
        QCOMPARE(reports[1].dump(), reports[0].dump());
#endif
    }

    void inspectShowsQdq() {
#ifndef QUANTLENS_CLI
        QSKIP("quantlens-cli is not built");
#else
        if (m_manifest.is_null()) QSKIP("no fixtures");
        QProcess p;
        p.start(QStringLiteral(QUANTLENS_CLI),
                {QStringLiteral("inspect"), m_dir.filePath(QStringLiteral("qdq.onnx"))});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(out.contains(QStringLiteral("QDQ per-axis 0")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("QDQ block 4 along axis 1")), qPrintable(out));
        p.start(QStringLiteral(QUANTLENS_CLI), {QStringLiteral("inspect"), QStringLiteral("--json"),
                                                m_dir.filePath(QStringLiteral("qdq.onnx"))});
        QVERIFY(p.waitForFinished(60000));
        const auto json = parseJson(p.readAllStandardOutput());
        bool found = false;
        for (const auto& t : json["tensors"])
            if (t["name"] == "blk_DequantizeLinear_Output") {
                found = true;
                QCOMPARE(t["qdq"]["scheme"].get<std::string>(), std::string("block"));
                QCOMPARE(t["qdq"]["block_size"].get<int>(), 4);
                QCOMPARE(t["qdq"]["codes"].get<std::string>(), std::string("blk_quantized"));
            }
        QVERIFY(found);
#endif
    }
};

QTEST_GUILESS_MAIN(TestOnnx)
#include "tst_onnx.moc"
