// Bad safetensors input: every malformed file gives a FileError that names the file, the tensor
// when there is one, and the reason — never a crash, a hang or a silently wrong tensor.
#include "base/error.h"
#include "io/safetensors_header.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "io_test_util.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace ql;
using namespace qltest;

namespace {
std::string st(const std::string& header, std::size_t dataBytes = 0) {
    return safetensorsBytes(header, std::string(dataBytes, '\x11'));
}
const std::string kOk = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
} // namespace

class TestSafetensorsErrors : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void rejectsMalformedFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("tensor"); // named in the message, when the fault is in one tensor
        QTest::addColumn<QString>("reason"); // a fragment of the message

        auto row = [](const char* name, const std::string& bytes, const char* tensor, const char* reason) {
            QTest::addRow("%s", name)
                << QByteArray::fromStdString(bytes) << QString::fromUtf8(tensor) << QString::fromUtf8(reason);
        };
        row("empty-file", "", "", "truncated");
        row("truncated-length", std::string("\x10\0\0", 3), "", "truncated");
        row("header-longer-than-file", st(kOk, 8).substr(0, 30), "", "larger than the file");
        row("header-absurdly-large", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "",
            "absurdly large");
        row("header-length-zero", safetensorsBytes(""), "", "too small");
        row("invalid-json", st(R"({"w": {"dtype": "F32",)"), "", "not valid JSON");
        row("number-beyond-double", st(R"({"w":{"dtype":"F32","shape":[3E31466747],"data_offsets":[0,8]}})"),
            "", "not valid JSON");
        row("invalid-utf8-name",
            st("{\"w\xff\xfe\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}"), "", "UTF-8");
        row("header-not-object", st("[1,2,3]"), "", "must be a JSON object");
        row("entry-not-object", st(R"({"w": 5})"), "w", "must be a JSON object");
        row("missing-field", st(R"({"w":{"dtype":"F32","shape":[2]}})", 8), "w",
            "needs dtype, shape and data_offsets");
        row("unexpected-field", st(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8), "w",
            "unexpected field");
        row("unknown-dtype", st(R"({"w":{"dtype":"F128","shape":[2],"data_offsets":[0,8]}})", 8), "w",
            "unknown dtype 'F128'");
        row("dtype-not-string", st(R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", 8), "w",
            "dtype must be a string");
        row("negative-dimension", st(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "w",
            "non-negative integer");
        row("fractional-dimension", st(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8), "w",
            "non-negative integer");
        row("offsets-out-of-range", st(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "w",
            "past the end");
        row("offsets-reversed", st(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8), "w",
            "before begin");
        row("offsets-not-a-pair", st(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8), "w",
            "[begin, end]");
        row("byte-count-mismatch", st(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", 8), "w",
            "does not match");
        row("shape-overflow",
            st(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8), "w",
            "overflow");
        // A zero dimension makes no elements, but strides still multiply the others.
        row("shape-overflow-beside-zero",
            st(R"({"w":{"dtype":"F32","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}})"), "w",
            "overflow");
        row("overlapping",
            st(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               12),
            "a", "overlap");
        // As strict as the reference reader: the data is exactly the tensors, back to back.
        row("hole-between-tensors",
            st(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[4,5]}})",
               5),
            "b", "hole of 3 bytes");
        row("trailing-bytes", st(kOk, 16), "", "8 bytes after the last tensor");
        row("duplicate-names",
            st(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
               8),
            "w", "names 'w' twice");
        row("empty-name", st(R"({"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8), "",
            "empty name");
        row("metadata-not-strings",
            st(R"({"__metadata__":{"n":1},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8), "",
            "is not a string");
        row("zero-length-with-bytes", st(R"({"w":{"dtype":"F32","shape":[0,3],"data_offsets":[0,8]}})", 8),
            "w", "does not match");
    }
    void rejectsMalformedFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, tensor);
        QFETCH(QString, reason);
        const std::string file = m_dir.path().toStdString() + "/" + QTest::currentDataTag() + ".safetensors";
        writeFile(file, bytes.toStdString());
        try {
            const auto src = openTensorSource(file);
            QFAIL(qPrintable(QStringLiteral("opened without error, %1 tensors").arg(src->tensors().size())));
        } catch (const FileError& e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QString::fromStdString(file)), qPrintable(msg));
            QVERIFY2(msg.contains(reason), qPrintable(msg));
            if (!tensor.isEmpty())
                QVERIFY2(msg.contains(QLatin1Char('\'') + tensor + QLatin1Char('\'')), qPrintable(msg));
        }
        // The in-memory parser (the fuzzer's entry) agrees.
        const auto* p = reinterpret_cast<const std::byte*>(bytes.constData());
        QVERIFY_THROWS_EXCEPTION(FileError,
                                 parseSafetensors({p, static_cast<std::size_t>(bytes.size())}, "mem"));
    }

    // A name from another format (HDF5 allows any bytes) that is not UTF-8 cannot go into a
    // safetensors header: the writer says so, naming the file, and writes nothing.
    void writerRefusesNamesThatAreNotUtf8() {
        const std::string file = m_dir.filePath(QStringLiteral("not-utf8.safetensors")).toStdString();
        try {
            writeSafetensors(file, {{"w\xff\xfe.weight", Tensor::fromFloats({2}, std::vector<float>{1, 2})}});
            QFAIL("wrote a name that is not UTF-8");
        } catch (const FileError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.starts_with(file + ": ") && msg.find("not valid UTF-8") != std::string::npos,
                     msg.c_str());
        }
        QVERIFY(!QFile::exists(QString::fromStdString(file)));
    }

    void acceptsEdgeCases_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("tensors");
        auto row = [](const char* name, const std::string& bytes, int n) {
            QTest::addRow("%s", name) << QByteArray::fromStdString(bytes) << n;
        };
        row("empty-header", st("{}"), 0);
        row("zero-length-tensor",
            st(R"({"e":{"dtype":"I8","shape":[3,0],"data_offsets":[0,0]},)"
               R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
               8),
            2);
        row("padded-header", st(kOk + "      ", 8), 1);
        row("scalar", st(R"({"s":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}})", 2), 1);
    }
    void acceptsEdgeCases() {
        QFETCH(QByteArray, bytes);
        QFETCH(int, tensors);
        const std::string file =
            m_dir.path().toStdString() + "/ok-" + QTest::currentDataTag() + ".safetensors";
        writeFile(file, bytes.toStdString());
        const auto src = openTensorSource(file);
        QCOMPARE(int(src->tensors().size()), tensors);
        for (const auto& t : src->tensors())
            QCOMPARE(src->load(t.name).byteSize(), t.byteSize);
    }

    void reportsMissingAndBadShards_data() {
        QTest::addColumn<QString>("weightMap");
        QTest::addColumn<QString>("reason");
        QTest::addRow("missing-shard")
            << QStringLiteral(R"({"w": "model-00001-of-00002.safetensors", "v": "gone.safetensors"})")
            << QStringLiteral("missing shard 'gone.safetensors'");
        QTest::addRow("tensor-not-in-shard")
            << QStringLiteral(
                   R"({"w": "model-00001-of-00002.safetensors", "nope": "model-00001-of-00002.safetensors"})")
            << QStringLiteral("tensor 'nope' is mapped to shard");
        QTest::addRow("shard-outside-folder")
            << QStringLiteral(R"({"w": "../elsewhere.safetensors"})") << QStringLiteral("next to the index");
        QTest::addRow("no-weight-map") << QString() << QStringLiteral("no \"weight_map\"");
    }
    void reportsMissingAndBadShards() {
        QFETCH(QString, weightMap);
        QFETCH(QString, reason);
        const QTemporaryDir dir;
        const std::string d = dir.path().toStdString() + "/";
        writeFile(d + "model-00001-of-00002.safetensors", st(kOk, 8));
        const std::string index = d + "model.safetensors.index.json";
        writeFile(index, weightMap.isEmpty() ? std::string("{}")
                                             : R"({"weight_map": )" + weightMap.toStdString() + "}");
        try {
            openTensorSource(index);
            QFAIL("opened without error");
        } catch (const FileError& e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(reason) && msg.contains(QString::fromStdString(index)), qPrintable(msg));
        }
    }

    void reportsUnreadablePaths() {
        QVERIFY_THROWS_EXCEPTION(
            FileError, openTensorSource(m_dir.path().toStdString() + "/does-not-exist.safetensors"));
        QVERIFY_THROWS_EXCEPTION(FileError,
                                 openTensorSource(m_dir.path().toStdString())); // folder without a model
    }
};

QTEST_GUILESS_MAIN(TestSafetensorsErrors)
#include "tst_safetensors_errors.moc"
