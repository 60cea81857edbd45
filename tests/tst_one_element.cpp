// One-element tensors through the whole CLI: a [1]-shaped branch scale, a [1, 1] weight and a [1, 1, 1, 1]
// conv, named on the command line (so no whole-model default can skip them), under every calibration
// and backend. MSE and entropy calibration on such a tensor once killed the process (SIGSEGV): the
// calibrators' per-thread tables were merged for threads a one-element tensor never starts.
#include "cli_test_util.h"
#include "io_test_util.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

using qltest::CliRun;
using qltest::runCli;

namespace {

std::string f32Bytes(std::initializer_list<float> values) {
    std::string out;
    for (float v : values) {
        char b[4];
        std::memcpy(b, &v, 4);
        out.append(b, 4);
    }
    return out;
}

} // namespace

class TestOneElement : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyCalibrationOnOneElement_data();
    void everyCalibrationOnOneElement();

private:
    QTemporaryDir m_dir;
    QString m_model;
};

void TestOneElement::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath(QStringLiteral("tiny.safetensors"));
    const std::string header = R"({"branch.scale":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("fc.weight":{"dtype":"F32","shape":[1,1],"data_offsets":[4,8]},)"
                               R"("conv.weight":{"dtype":"F32","shape":[1,1,1,1],"data_offsets":[8,12]}})";
    qltest::writeFile(m_model.toStdString(),
                      qltest::safetensorsBytes(header, f32Bytes({0.8164966f, -0.3125f, 1.75f})));
}

void TestOneElement::everyCalibrationOnOneElement_data() {
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<QStringList>("spec");
    const QStringList tensors = {QStringLiteral("branch.scale"), QStringLiteral("fc.weight"),
                                 QStringLiteral("conv.weight")};
    const QList<QStringList> specs = {
        {QStringLiteral("--calib"), QStringLiteral("entropy")},
        {QStringLiteral("--calib"), QStringLiteral("mse")},
        {QStringLiteral("--calib"), QStringLiteral("percentile=99.9")},
        {QStringLiteral("--calib"), QStringLiteral("absmax")},
        {QStringLiteral("--calib"), QStringLiteral("minmax"), QStringLiteral("--asymmetric")},
        {QStringLiteral("--calib"), QStringLiteral("mse"), QStringLiteral("--asymmetric"),
         QStringLiteral("--dtype"), QStringLiteral("uint8")},
        {QStringLiteral("--calib"), QStringLiteral("entropy"), QStringLiteral("--scheme"),
         QStringLiteral("per-tensor")},
        {QStringLiteral("--calib"), QStringLiteral("mse"), QStringLiteral("--dtype"),
         QStringLiteral("fp8-e4m3"), QStringLiteral("--preset"), QStringLiteral("tensorrt"),
         QStringLiteral("--scheme"), QStringLiteral("per-tensor")},
    };
    for (const QString& t : tensors)
        for (const QStringList& s : specs)
            for (const char* backend : {"cpu", "cpu-reference"})
                QTest::addRow("%s/%s/%s", qPrintable(t), qPrintable(s.join(u' ')), backend)
                    << t << (s + QStringList{QStringLiteral("--backend"), QLatin1String(backend)});
}

void TestOneElement::everyCalibrationOnOneElement() {
    QFETCH(QString, tensor);
    QFETCH(QStringList, spec);
    const CliRun r = runCli(QStringList{QStringLiteral("quantize"), m_model, QStringLiteral("--tensor"),
                                        tensor, QStringLiteral("-q"), QStringLiteral("--report"),
                                        m_dir.filePath(QStringLiteral("r.json"))} +
                                spec,
                            m_dir.path(), 60000);
    QVERIFY2(r.code == 0, qPrintable(QStringLiteral("exit %1: ").arg(r.code) + QString::fromUtf8(r.err)));
    QVERIFY2(r.out.contains(tensor.toUtf8()), r.out.constData());
    // The report holds the tensor, quantized without an error.
    const auto report =
        nlohmann::json::parse(qltest::readFile(m_dir.filePath(QStringLiteral("r.json")).toStdString()));
    const auto& t = report["tensors"][0];
    QCOMPARE(QString::fromStdString(t["name"].get<std::string>()), tensor);
    QVERIFY2(!t.contains("error") || t["error"].get<std::string>().empty(), t.dump().c_str());
}

QTEST_GUILESS_MAIN(TestOneElement)
#include "tst_one_element.moc"
