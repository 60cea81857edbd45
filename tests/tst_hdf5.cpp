// HDF5 in: files written by h5py (every integer and float type, both byte orders, contiguous, chunked
// and gzip storage, Keras model_weights groups) are read bit for bit; bad files become FileErrors
// and the HDF5 library prints nothing to the terminal.
#include "base/error.h"
#include "io/hdf5_source.h"
#include "io/tensor_source.h"
#include "io_test_util.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cstdio>
#include <unistd.h>

using namespace ql;
using namespace qltest;

namespace {
// Captures what is written to stderr (fd 2) while `fn` runs: HDF5 prints its error stack there.
template <typename Fn> std::string stderrOf(Fn&& fn) {
    std::fflush(stderr);
    FILE* tmp = std::tmpfile();
    const int saved = ::dup(2);
    ::dup2(::fileno(tmp), 2);
    try {
        fn();
    } catch (...) {
    }
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::string out;
    std::rewind(tmp);
    for (int c; (c = std::fgetc(tmp)) != EOF;)
        out += static_cast<char>(c);
    std::fclose(tmp);
    return out;
}
} // namespace

class TestHdf5 : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_file;
    nlohmann::json m_expected;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!pythonHas(QStringLiteral("h5py, numpy"))) return;
        m_file = m_dir.path().toStdString() + "/h5py.h5";
        QString err;
        runPython({pythonScript("io_hdf5.py"), QStringLiteral("make"), QString::fromStdString(m_file),
                   m_dir.path() + QStringLiteral("/h5py.json")},
                  &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        m_expected = nlohmann::json::parse(readFile(m_dir.path().toStdString() + "/h5py.json"));
    }

    void readsH5pyDatasets_data() {
        QTest::addColumn<QString>("dataset");
        // Rows are the datasets io_hdf5.py writes; named here so each is its own result line.
        for (const char* kind : {"f8", "f4", "f2", "i1", "u1", "i2", "i4", "i8", "u2", "u4", "b1"})
            for (const char* order : {"le", "be"})
                for (const char* storage : {"contiguous", "chunked", "gzip"}) {
                    if (QByteArray(kind) == "b1" && QByteArray(order) == "be") continue;
                    QTest::addRow("%s/%s/%s", kind, order, storage)
                        << QStringLiteral("types/%1/%2/%3")
                               .arg(QLatin1String(kind), QLatin1String(order), QLatin1String(storage));
                }
        for (const char* keras :
             {"model_weights/dense/dense/kernel:0", "model_weights/dense/dense/bias:0",
              "model_weights/conv2d/conv2d/kernel:0", "model_weights/conv2d/conv2d/bias:0"})
            QTest::addRow("keras/%s", keras) << QString::fromUtf8(keras);
        QTest::addRow("scalar") << QStringLiteral("scalar");
        QTest::addRow("zero-length") << QStringLiteral("empty");
    }
    void readsH5pyDatasets() {
        QFETCH(QString, dataset);
        if (m_expected.is_null()) QSKIP("python3 with h5py is not available");
        const std::string name = dataset.toStdString();
        const auto src = openTensorSource(m_file);
        const TensorInfo* info = src->find(name);
        QVERIFY2(info, name.c_str());
        const auto& exp = m_expected[name];
        QCOMPARE(std::string(safetensorsName(info->dtype)), exp["dtype"].get<std::string>());
        QCOMPARE(info->shape, exp["shape"].get<Shape>());
        const Tensor t = src->load(name);
        QCOMPARE(toHex(t), exp["hex"].get<std::string>());
        if (dataset.endsWith(QLatin1String("gzip")))
            QVERIFY(info->location.find("gzip") != std::string::npos);
        if (!info->shape.empty() && info->shape[0] > 2) { // a row slice equals the same bytes of the whole
            const Tensor rows = src->loadRows(name, 1, 2);
            const std::size_t rowBytes = t.byteSize() / static_cast<std::size_t>(info->shape[0]);
            QCOMPARE(toHex(rows), toHex(t.data() + rowBytes, 2 * rowBytes));
        }
    }

    void listsOnlyReadableDatasets() {
        if (m_expected.is_null()) QSKIP("python3 with h5py is not available");
        const auto src = Hdf5Source::open(m_file);
        QCOMPARE(src->tensors().size(), m_expected.size()); // the soft link is not listed twice
        QCOMPARE(src->unlisted().size(), std::size_t(7));
    }

    // inspect lists what it leaves out of the inventory, with the reason, so "0 tensors" is never
    // all a user learns about a file.
    void inspectSaysWhatIsNotListed() {
#ifndef QUANTLENS_CLI
        QSKIP("quantlens-cli is not built");
#else
        if (m_expected.is_null()) QSKIP("python3 with h5py is not available");
        QProcess p;
        p.start(QStringLiteral(QUANTLENS_CLI), {QStringLiteral("inspect"), QString::fromStdString(m_file)});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(out.contains(QStringLiteral("not listed: unsupported/strings: unsupported type: string")),
                 qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("not listed: unwritten/chunked: only 0 of its 4000 chunks")),
                 qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("not listed: unsupported/esc\\x1B[2J")) &&
                     !out.contains(QChar(0x1b)),
                 qPrintable(out));
        p.start(QStringLiteral(QUANTLENS_CLI),
                {QStringLiteral("inspect"), QStringLiteral("--json"), QString::fromStdString(m_file)});
        QVERIFY(p.waitForFinished(60000));
        const auto j = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        QCOMPARE(j["not_listed"].size(), std::size_t(7));
#endif
    }

    void explainsUnsupportedTypes_data() {
        QTest::addColumn<QString>("dataset");
        QTest::addColumn<QString>("reason");
        QTest::addRow("string") << QStringLiteral("unsupported/strings")
                                << QStringLiteral("unsupported type: string");
        QTest::addRow("compound") << QStringLiteral("unsupported/compound")
                                  << QStringLiteral("unsupported type: compound");
        QTest::addRow("uint64") << QStringLiteral("unsupported/uint64") << QStringLiteral("uint64");
        QTest::addRow("missing") << QStringLiteral("no/such/dataset") << QStringLiteral("no dataset named");
        QTest::addRow("unwritten chunks") << QStringLiteral("unwritten/chunked")
                                          << QStringLiteral("only 0 of its 4000 chunks were written");
        QTest::addRow("unwritten block")
            << QStringLiteral("unwritten/contiguous") << QStringLiteral("its data was never written");
        QTest::addRow("partly written")
            << QStringLiteral("unwritten/partly") << QStringLiteral("only 1 of its 4 chunks were written");
    }
    void explainsUnsupportedTypes() {
        QFETCH(QString, dataset);
        QFETCH(QString, reason);
        if (m_expected.is_null()) QSKIP("python3 with h5py is not available");
        const auto src = openTensorSource(m_file);
        try {
            src->load(dataset.toStdString());
            QFAIL("loaded an unsupported dataset");
        } catch (const FileError& e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(reason) && msg.contains(dataset) &&
                         msg.contains(QString::fromStdString(m_file)),
                     qPrintable(msg));
        }
    }

    void rejectsFilesThatAreNotHdf5_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        QTest::addRow("text") << QByteArray("this is not HDF5 at all") << QStringLiteral("not an HDF5 file");
        QTest::addRow("empty") << QByteArray() << QStringLiteral("not an HDF5 file");
        QTest::addRow("truncated-signature")
            << QByteArray("\x89HDF\r\n\x1a\n\0\0\0", 11) << QStringLiteral("HDF5");
        QTest::addRow("keras3-zip") << QByteArray("PK\x03\x04 zip archive", 16)
                                    << QStringLiteral("zip archive");
    }
    void rejectsFilesThatAreNotHdf5() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        const std::string file = m_dir.path().toStdString() + "/" + QTest::currentDataTag() + ".h5";
        writeFile(file, bytes.toStdString());
        QString msg;
        const std::string printed = stderrOf([&] {
            try {
                openTensorSource(file);
            } catch (const FileError& e) {
                msg = QString::fromUtf8(e.what());
            }
        });
        QVERIFY2(msg.contains(reason) && msg.contains(QString::fromStdString(file)), qPrintable(msg));
        QVERIFY2(printed.empty(), printed.c_str()); // no HDF5 error stack on the terminal
    }
};

QTEST_GUILESS_MAIN(TestHdf5)
#include "tst_hdf5.moc"
