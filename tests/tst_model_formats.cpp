// The one table of model formats: which format opens a file (a deciding magic, then the extension,
// then a weak magic), and the names and patterns the CLI's help and the app's dialogs show.
#include "base/error.h"
#include "io/model_formats.h"
#include "io/tensor_source.h"

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

using namespace ql;

namespace {

const std::string kHdf5("\x89HDF\r\n\x1a\n-rest", 13);
const std::string kSafetensors("\x10\0\0\0\0\0\0\0{\"a\": 1}", 16);

} // namespace

class TestModelFormats : public QObject {
    Q_OBJECT
private slots:
    void formatOf_data();
    void formatOf();
    void namesAndFilterCoverTheTable();
    void aKerasZipIsRefusedByTheHdf5Opener();
};

void TestModelFormats::formatOf_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QString>("format");    // the format's name
    QTest::addColumn<QString>("extension"); // its first extension, telling the two safetensors rows apart
    const QByteArray hdf5 = QByteArray::fromStdString(kHdf5), st = QByteArray::fromStdString(kSafetensors);
    QTest::addRow("safetensors/by-extension") << "m.safetensors" << QByteArray("garbage") << "safetensors"
                                              << ".safetensors";
    QTest::addRow("safetensors/by-content") << "weights.bin" << st << "safetensors"
                                            << ".safetensors";
    QTest::addRow("index/by-extension") << "model.safetensors.index.json" << QByteArray("{}") << "safetensors"
                                        << ".index.json";
    QTest::addRow("index/by-content") << "weights.txt" << QByteArray("{\"weight_map\": {}}") << "safetensors"
                                      << ".index.json";
    QTest::addRow("hdf5/by-extension") << "m.keras" << QByteArray("not hdf5") << "HDF5"
                                       << ".h5";
    QTest::addRow("hdf5/magic-decides") << "renamed.onnx" << hdf5 << "HDF5"
                                        << ".h5";
    QTest::addRow("gguf/by-extension") << "m.gguf" << QByteArray("nonsense") << "GGUF"
                                       << ".gguf";
    QTest::addRow("gguf/magic-decides") << "model.safetensors" << QByteArray("GGUF\3\0\0\0") << "GGUF"
                                        << ".gguf";
    QTest::addRow("onnx/upper-case") << "M.ONNX" << QByteArray("\x08\x07") << "ONNX"
                                     << ".onnx";
    QTest::addRow("unknown/safetensors-explains") << "notes.txt" << QByteArray("hello") << "safetensors"
                                                  << ".safetensors";
}

void TestModelFormats::formatOf() {
    QFETCH(QString, file);
    QFETCH(QByteArray, head);
    QFETCH(QString, format);
    QFETCH(QString, extension);
    QTemporaryDir dir;
    const std::string path = dir.filePath(file).toStdString();
    std::ofstream(path, std::ios::binary).write(head.constData(), head.size());
    const ModelFormat& f = modelFormatOf(path);
    QCOMPARE(QString::fromStdString(f.name), format);
    QCOMPARE(QString::fromStdString(f.extensions.front()), extension);
}

void TestModelFormats::namesAndFilterCoverTheTable() {
    QCOMPARE(modelFormatNames(), std::string("safetensors, HDF5, GGUF or ONNX"));
    const std::string filter = modelFileDialogFilter();
    QVERIFY(filter.rfind("Model files (", 0) == 0);
    QVERIFY(filter.size() > 16 && filter.substr(filter.size() - 16) == ");;All files (*)");
    for (const ModelFormat& f : modelFormats()) {
        QVERIFY(f.open);
        QVERIFY(!f.magicDecides || f.magic);
        for (const std::string& e : f.extensions)
            QVERIFY2(filter.find(" *" + e) != std::string::npos || filter.find("(*" + e) != std::string::npos,
                     e.c_str());
    }
}

void TestModelFormats::aKerasZipIsRefusedByTheHdf5Opener() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("model.keras")).toStdString();
    std::ofstream(path, std::ios::binary) << std::string("PK\3\4 an archive", 15);
    try {
        (void)openTensorSource(path);
        QFAIL("a zip archive opened");
    } catch (const FileError& e) {
        QVERIFY2(std::string(e.what()).find("a zip archive, not HDF5") != std::string::npos, e.what());
    }
}

QTEST_GUILESS_MAIN(TestModelFormats)
#include "tst_model_formats.moc"
