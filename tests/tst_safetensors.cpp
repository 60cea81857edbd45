// safetensors in and out: files written by Python's struct+json are read bit for bit, files written
// by QuantLens are read back bit for bit by Python, for every dtype; sharded indexes; atomic writes.
#include "base/error.h"
#include "io/safetensors_source.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "io_test_util.h"

#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

using namespace ql;
using namespace qltest;
namespace fs = std::filesystem;

class TestSafetensors : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    nlohmann::json m_expected;
    std::string m_pythonFile;
    std::string path(const char* name) const {
        return QString(m_dir.path() + QLatin1Char('/')).toStdString() + name;
    }

    static Tensor bytesTensor(DType dtype, Shape shape, const std::string& bytes) {
        Tensor t(dtype, std::move(shape));
        if (!bytes.empty()) std::memcpy(t.mutableData(), bytes.data(), bytes.size());
        return t;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!pythonHas(QStringLiteral("numpy"))) return; // the Python rows skip themselves
        m_pythonFile = path("python.safetensors");
        QString err;
        runPython({pythonScript("io_safetensors.py"), QStringLiteral("make"),
                   QString::fromStdString(m_pythonFile), QString::fromStdString(path("python.json"))},
                  &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        m_expected = nlohmann::json::parse(readFile(path("python.json")));
    }

    void readsPythonFile_data() {
        QTest::addColumn<QString>("tensor");
        for (const char* dt :
             {"f64", "f32", "f16", "bf16", "i8", "u8", "i16", "i32", "i64", "f8_e4m3", "f8_e5m2", "bool"})
            QTest::addRow("%s", dt) << QStringLiteral("model.%1.weight").arg(QLatin1String(dt));
        QTest::addRow("zero-length") << QStringLiteral("empty.bias");
    }
    void readsPythonFile() {
        QFETCH(QString, tensor);
        if (m_expected.is_null()) QSKIP("python3 with numpy is not available");
        const std::string name = tensor.toStdString();
        const auto src = openTensorSource(m_pythonFile);
        const TensorInfo* info = src->find(name);
        QVERIFY(info);
        const auto& exp = m_expected[name];
        QCOMPARE(std::string(safetensorsName(info->dtype)), exp["dtype"].get<std::string>());
        QCOMPARE(info->shape, exp["shape"].get<Shape>());
        const Tensor t = src->load(name);
        QCOMPARE(t.byteSize(), info->byteSize);
        QCOMPARE(toHex(t), exp["hex"].get<std::string>());
    }

    void listsInFileOrderWithMetadata() {
        if (m_expected.is_null()) QSKIP("python3 with numpy is not available");
        const auto src = SafetensorsSource::openFile(m_pythonFile);
        QCOMPARE(src->tensors().size(), m_expected.size());
        QCOMPARE(src->metadata().at("origin"), std::string("python struct+json"));
        for (std::size_t i = 1; i < src->tensors().size();
             ++i) // offsets increase: Python wrote them in order
            QVERIFY(src->tensors()[i - 1].byteSize == 0 ||
                    src->tensors()[i].location != src->tensors()[i - 1].location);
        QCOMPARE(src->tensors().front().name, std::string("model.f64.weight"));
    }

    void writerRoundTripsThroughPython_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<Shape>("shape");
        const std::pair<const char*, DType> types[] = {
            {"f64", DType::F64},        {"f32", DType::F32},        {"f16", DType::F16},
            {"bf16", DType::BF16},      {"i8", DType::I8},          {"u8", DType::U8},
            {"i16", DType::I16},        {"i32", DType::I32},        {"i64", DType::I64},
            {"f8_e4m3", DType::F8E4M3}, {"f8_e5m2", DType::F8E5M2}, {"bool", DType::Bool}};
        for (const auto& [n, t] : types)
            QTest::addRow("%s/2d", n) << int(t) << Shape{3, 7};
        QTest::addRow("f32/scalar") << int(DType::F32) << Shape{};
        QTest::addRow("f32/zero-length") << int(DType::F32) << Shape{0, 5};
        QTest::addRow("i8/rank4") << int(DType::I8) << Shape{2, 1, 3, 2};
    }
    void writerRoundTripsThroughPython() {
        QFETCH(int, dtype);
        QFETCH(Shape, shape);
        if (!pythonHas(QStringLiteral("numpy"))) QSKIP("python3 with numpy is not available");
        Tensor t(DType(dtype), shape);
        for (std::size_t i = 0; i < t.byteSize(); ++i)
            t.mutableData()[i] = std::byte(static_cast<unsigned char>(i * 37 + dtype));
        Tensor other = Tensor::fromFloats(Shape{2}, std::vector<float>{1.5f, -2.0f});
        const std::string file = path("written.safetensors");
        writeSafetensors(file, {{"first", other}, {"layer.0.weight", t}}, {{"note", "ü utf-8"}});

        QString err;
        const auto dump = parseJson(runPython(
            {pythonScript("io_safetensors.py"), QStringLiteral("dump"), QString::fromStdString(file)}, &err));
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(dump["metadata"]["note"].get<std::string>(), std::string("ü utf-8"));
        QCOMPARE(dump["header_length"].get<int>() % 8, 0); // padded like the reference writer
        const auto& w = dump["tensors"]["layer.0.weight"];
        QCOMPARE(w["dtype"].get<std::string>(), std::string(safetensorsName(DType(dtype))));
        QCOMPARE(w["shape"].get<Shape>(), shape);
        QCOMPARE(w["hex"].get<std::string>(), toHex(t));
        // ...and QuantLens reads its own file identically.
        const auto src = openTensorSource(file);
        QCOMPARE(toHex(src->load("layer.0.weight")), toHex(t));
        QCOMPARE(src->load("first").toFloatVector(), (std::vector<float>{1.5f, -2.0f}));
    }

    void loadsRows() {
        std::vector<float> v(4 * 3);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = float(i);
        const std::string file = path("rows.safetensors");
        writeSafetensors(file, {{"w", Tensor::fromFloats(Shape{4, 3}, v)}});
        const auto src = openTensorSource(file);
        const Tensor rows = src->loadRows("w", 1, 2);
        QCOMPARE(rows.shape(), (Shape{2, 3}));
        QCOMPARE(rows.toFloatVector(), (std::vector<float>{3, 4, 5, 6, 7, 8}));
        QCOMPARE(src->loadRows("w", 4, 0).elementCount(), std::int64_t(0));
        QVERIFY_THROWS_EXCEPTION(FileError, src->loadRows("w", 3, 2));
        QVERIFY_THROWS_EXCEPTION(FileError, src->load("missing"));
    }

    void opensShardedIndex() {
        const QTemporaryDir dir;
        const std::string d = dir.path().toStdString() + "/";
        writeSafetensors(d + "model-00001-of-00002.safetensors",
                         {{"a.weight", Tensor::fromFloats(Shape{2}, std::vector<float>{1, 2})},
                          {"b.weight", Tensor::fromFloats(Shape{1}, std::vector<float>{3})}});
        writeSafetensors(d + "model-00002-of-00002.safetensors",
                         {{"c.weight", Tensor::fromFloats(Shape{1, 2}, std::vector<float>{4, 5})}});
        writeFile(
            d + "model.safetensors.index.json",
            R"({"metadata": {"total_size": 20}, "weight_map": {"c.weight": "model-00002-of-00002.safetensors",
                      "a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00001-of-00002.safetensors"}})");
        for (const std::string& open : {d + "model.safetensors.index.json", dir.path().toStdString()}) {
            const auto src = openTensorSource(open);
            QCOMPARE(src->tensors().size(), std::size_t(3));
            QCOMPARE(src->tensors()[0].name, std::string("a.weight"));
            QCOMPARE(src->tensors()[2].name, std::string("c.weight"));
            QVERIFY(src->tensors()[2].location.find("model-00002-of-00002.safetensors") != std::string::npos);
            QCOMPARE(src->load("c.weight").toFloatVector(), (std::vector<float>{4, 5}));
            QCOMPARE(src->load("b.weight").toFloatVector(), (std::vector<float>{3}));
        }
    }

    void failedWriteLeavesTargetUntouched() {
        const std::string file = path("keep.safetensors");
        writeFile(file, "previous contents");
        Tensor packed(DType::I4, Shape{4}); // safetensors has no int4 dtype: the writer must refuse
        QVERIFY_THROWS_EXCEPTION(
            FileError, writeSafetensors(file, {{"ok", Tensor(DType::F32, Shape{2})}, {"x", packed}}));
        Tensor f(DType::F32, Shape{1});
        QVERIFY_THROWS_EXCEPTION(FileError, writeSafetensors(file, {{"dup", f}, {"dup", f}}));
        QCOMPARE(readFile(file), std::string("previous contents"));
        for (const auto& e : fs::directory_iterator(m_dir.path().toStdString()))
            QVERIFY2(e.path().filename().string().find(".tmp-") == std::string::npos,
                     "temporary file left behind");
    }

    void refusesWritingOverTheSource() {
        const std::string file = path("source.safetensors");
        writeSafetensors(file, {{"w", Tensor::fromFloats(Shape{1}, std::vector<float>{7})}});
        const std::string before = readFile(file);
        try {
            writeSafetensors(file, {{"w", Tensor(DType::F32, Shape{1})}}, {},
                             m_dir.path().toStdString() + "/./source.safetensors");
            QFAIL("writing over the source was not refused");
        } catch (const FileError& e) {
            QVERIFY2(std::string(e.what()).find("file being read") != std::string::npos, e.what());
        }
        QCOMPARE(readFile(file), before);
    }

    void overwritesAnotherFileAtomically() {
        const std::string file = path("replace.safetensors");
        writeFile(file, "old");
        writeSafetensors(file, {{"w", Tensor::fromFloats(Shape{1}, std::vector<float>{7})}});
        QCOMPARE(openTensorSource(file)->load("w").toFloatVector(), std::vector<float>{7});
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
