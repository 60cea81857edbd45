// diff, beyond values: llama.cpp's q/k row order undone from a real GGUF's head counts (made by ggml,
// checked against the converter's permute in numpy), stored codes compared when both sides have them
// (GGUF blocks, ONNX QDQ), and --requantize: A quantized through the job pipeline, its codes against
// an onnxruntime-style QDQ model's, with the expected counts computed independently in numpy.
#include "base/error.h"
#include "cli_test_util.h"
#include "io/gguf_source.h"
#include "io/llama_rows.h"
#include "io/safetensors_writer.h"
#include "io/stored_quantization.h"
#include "io_test_util.h"
#include "job/tensor_diff.h"
#include "quantlens/config.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace ql;

namespace {

const QString kGguf = QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/");

std::string fixture(const char* name) {
    return QString(kGguf + QLatin1String(name)).toStdString();
}

const TensorDiff& pairOf(const std::vector<TensorDiff>& diffs, const std::string& a) {
    for (const auto& d : diffs)
        if (d.pair.a == a) return d;
    throw std::runtime_error("no pair " + a);
}

std::vector<float> normalValues(std::size_t n) {
    std::mt19937 gen(21);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(gen);
    return v;
}

std::vector<TensorDiff> diffAll(const TensorSource& a, const TensorSource& b) {
    std::vector<TensorDiff> out;
    for (const auto& p : matchTensors(a, b).pairs)
        out.push_back(diffTensors(a, b, p));
    return out;
}

} // namespace

class TestDiffCodes : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void llamaPermutation();
    void undoesTheConvertersRowOrder();
    void saysWhenHeadCountsAreMissing();
    void gridsAndRowOrder();
    void ggufCodes();
    void onnxStoredCodes();
    void requantizeAgainstQdq();
    void requantizeRefusals();
    void compressedTensorsExports();
    void craftedCompressedTensors();

private:
    QByteArray cli(const QStringList& args, int expectCode);
    // The entry of the pair whose B is fc.weight's DequantizeLinear output, in report `name`.
    nlohmann::json report(const char* name);

    QTemporaryDir m_dir;
    nlohmann::json m_manifest; // null: no python3 with onnx and numpy
};

void TestDiffCodes::initTestCase() {
    QVERIFY(m_dir.isValid());
    if (!qltest::pythonHas(QStringLiteral("onnx, numpy"))) return;
    QString err;
    qltest::runPython({qltest::pythonScript("diff_codes_fixtures.py"), m_dir.path()}, &err, 120000);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    m_manifest = nlohmann::json::parse(
        qltest::readFile(m_dir.filePath(QStringLiteral("manifest.json")).toStdString()));
}

QByteArray TestDiffCodes::cli(const QStringList& args, int expectCode) {
    const qltest::CliRun r = qltest::runCli(args, m_dir.path());
    QByteArray out = r.out + r.err;
    if (r.code != expectCode) qWarning("%s", out.constData());
    [&] { QCOMPARE(r.code, expectCode); }();
    return out;
}

nlohmann::json TestDiffCodes::report(const char* name) {
    const auto r = nlohmann::json::parse(qltest::readFile(m_dir.filePath(QLatin1String(name)).toStdString()));
    for (const auto& t : r["tensors"])
        if (t["name_b"] == "fc.weight_DequantizeLinear_Output") return t;
    return nlohmann::json::object();
}

// The converter's reshape(heads, 2, half, cols).swapaxes(1, 2), worked by hand for 8 rows and 2 heads.
void TestDiffCodes::llamaPermutation() {
    QCOMPARE(llamaRowPermutation(8, 2), (std::vector<std::int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
    QCOMPARE(llamaRowPermutation(4, 1), (std::vector<std::int64_t>{0, 2, 1, 3}));
    QVERIFY_THROWS_EXCEPTION(QuantError, llamaRowPermutation(6, 2));
    // A crafted head count: 2 · heads would overflow (and pass the check as −2), looping for ever.
    QVERIFY_THROWS_EXCEPTION(QuantError, llamaRowPermutation(8, std::numeric_limits<std::int64_t>::max()));
    QVERIFY_THROWS_EXCEPTION(QuantError, llamaRowPermutation(8, std::int64_t{1} << 62));
    QVERIFY_THROWS_EXCEPTION(QuantError, llamaRowPermutation(8, 0));
}

void TestDiffCodes::undoesTheConvertersRowOrder() {
    const auto hf = openTensorSource(fixture("llama_qk.hf.safetensors"));
    const auto gguf = openTensorSource(fixture("llama_qk.gguf"));
    for (bool hfFirst : {true, false}) {
        const auto diffs = hfFirst ? diffAll(*hf, *gguf) : diffAll(*gguf, *hf);
        QCOMPARE(diffs.size(), std::size_t{3});
        for (const auto& d : diffs) {
            QVERIFY2(d.failure.empty(), d.failure.c_str());
            QCOMPARE(d.stats.maxAbsError(), 0.0);
            QCOMPARE(d.maxUlp, std::int64_t{0});
        }
        const std::string q = hfFirst ? "model.layers.0.self_attn.q_proj.weight" : "blk.0.attn_q.weight";
        const std::string k = hfFirst ? "model.layers.0.self_attn.k_proj.weight" : "blk.0.attn_k.weight";
        const std::string v = hfFirst ? "model.layers.0.self_attn.v_proj.weight" : "blk.0.attn_v.weight";
        QVERIFY2(pairOf(diffs, q).note.find("llama.attention.head_count = 4") != std::string::npos,
                 pairOf(diffs, q).note.c_str());
        QVERIFY2(pairOf(diffs, k).note.find("llama.attention.head_count_kv = 2") != std::string::npos,
                 pairOf(diffs, k).note.c_str());
        QVERIFY(pairOf(diffs, v).note.empty());
    }
    // The CLI: every pair exact.
    cli({QStringLiteral("diff"), kGguf + QStringLiteral("llama_qk.hf.safetensors"),
         kGguf + QStringLiteral("llama_qk.gguf"), QStringLiteral("--rule"), QStringLiteral("max_abs > 0")},
        0);
}

void TestDiffCodes::saysWhenHeadCountsAreMissing() {
    const auto hf = openTensorSource(fixture("llama_qk.hf.safetensors"));
    const auto gguf = openTensorSource(fixture("llama_qk_nometa.gguf"));
    const auto diffs = diffAll(*hf, *gguf);
    const TensorDiff& q = pairOf(diffs, "model.layers.0.self_attn.q_proj.weight");
    QVERIFY2(q.note.find("no integer llama.attention.head_count, so rows are compared as stored") !=
                 std::string::npos,
             q.note.c_str());
    QVERIFY(q.stats.maxAbsError() > 0); // the rows really are in another order
    QCOMPARE(pairOf(diffs, "model.layers.0.self_attn.v_proj.weight").stats.maxAbsError(), 0.0);
}

// Grids: trivial blocks are the same layout; rows move with their scales.
void TestDiffCodes::gridsAndRowOrder() {
    StoredQuantization a;
    a.format = "a";
    a.shape = {3, 2};
    a.layout.dims = {DimMapping::full(), DimMapping::blocked(2)};
    a.codes = {1, 2, 3, 4, 5, 6};
    a.scales = {0.5f, 1.5f, 2.5f};
    StoredQuantization b = a;
    b.layout.dims = {DimMapping::blocked(1), DimMapping::shared()};
    QCOMPARE(a.gridDifference(b), std::string());
    const StoredQuantization moved = a.withRows({2, 0, 1});
    QCOMPARE(moved.codes, (std::vector<std::int32_t>{5, 6, 1, 2, 3, 4}));
    QCOMPARE(moved.scales, (std::vector<float>{2.5f, 0.5f, 1.5f}));
    b.bits = 4;
    QCOMPARE(a.gridDifference(b), std::string("the code grids differ (int8 and int4)"));
    b = a;
    b.layout.dims = {DimMapping::shared(), DimMapping::full()};
    QVERIFY(a.gridDifference(b).find("laid out differently") != std::string::npos);
    b = a;
    b.format = "b";
    b.zeroPoints = {1, 0, 0};
    QCOMPARE(a.gridDifference(b), std::string("only b has zero points"));
    a.layout.dims = {DimMapping::blocked(2), DimMapping::full()};
    QVERIFY_THROWS_EXCEPTION(QuantError, a.withRows({2, 0, 1}));
}

// A real GGUF against itself, and against a copy with one Q8_0 code changed.
void TestDiffCodes::ggufCodes() {
    const std::string path = fixture("types_4x256.gguf");
    const auto src = GgufSource::open(path);
    const GgufTensorEntry& e = src->entry("q8_0.4x256");
    const QByteArray block(reinterpret_cast<const char*>(src->tensorData(e)), 34); // d (f16), 32 codes
    QFile in(QString::fromStdString(path));
    QVERIFY(in.open(QIODevice::ReadOnly));
    QByteArray bytes = in.readAll();
    const qsizetype at = bytes.indexOf(block);
    QVERIFY(at > 0 && bytes.indexOf(block, at + 1) < 0);
    const auto code = static_cast<std::int8_t>(bytes[at + 2 + 5]); // element 5
    bytes[at + 2 + 5] = static_cast<char>(code == 127 ? code - 1 : code + 1);
    const QString edited = m_dir.filePath(QStringLiteral("edited.gguf"));
    QFile out(edited);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size());
    out.close();

    const auto b = openTensorSource(edited.toStdString());
    const auto diffs = diffAll(*src, *b);
    for (const char* type : {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1"}) {
        const TensorDiff& d = pairOf(diffs, std::string(type) + ".4x256");
        QVERIFY2(d.codes, d.note.c_str());
        QCOMPARE(d.codes->compared, std::int64_t{1024});
        QCOMPARE(d.codes->scales, std::int64_t{1024 / 32});
        QCOMPARE(d.codes->formatA, "gguf " + QByteArray(type).toUpper().toStdString());
        const bool changed = std::string(type) == "q8_0";
        QCOMPARE(d.codes->mismatches, std::int64_t{changed});
        QCOMPARE(d.codes->maxDelta, std::int64_t{changed});
        QCOMPARE(d.codes->firstMismatch, changed ? std::int64_t{5} : std::int64_t{-1});
        QCOMPARE(d.codes->scaleMismatches, std::int64_t{0});
    }
    // The value moved by one step of its block's scale.
    const float scale = src->load("q8_0.4x256").toFloatVector()[5] / static_cast<float>(code);
    QVERIFY(std::fabs(pairOf(diffs, "q8_0.4x256").stats.maxAbsError() - std::fabs(scale)) <
            1e-6 * std::fabs(scale));
    const TensorDiff& k = pairOf(diffs, "q4_K.4x256");
    QVERIFY(!k.codes);
    QVERIFY2(k.note.find("codes not compared: gguf Q4_K") != std::string::npos, k.note.c_str());
    QVERIFY(!pairOf(diffs, "f16.4x256").codes);
    QVERIFY(pairOf(diffs, "f16.4x256").note.empty());
    const auto json = diffReport(path, edited.toStdString(), diffs);
    bool seen = false;
    for (const auto& t : json["tensors"])
        if (t["name"] == "q8_0.4x256") {
            seen = true;
            QCOMPARE(t["codes"]["code_mismatches"].get<int>(), 1);
            QCOMPARE(t["codes"]["format_b"].get<std::string>(), std::string("gguf Q8_0"));
        }
    QVERIFY(seen);
}

void TestDiffCodes::onnxStoredCodes() {
    if (!QUANTLENS_HAVE_ONNX) QSKIP("this build reads no ONNX");
    if (m_manifest.is_null()) QSKIP("python3 with onnx and numpy is not available");
    const QByteArray out =
        cli({QStringLiteral("diff"), QStringLiteral("qdq.onnx"), QStringLiteral("qdq_edited.onnx"),
             QStringLiteral("--report"), QStringLiteral("edited.json")},
            0);
    QVERIFY2(
        out.contains("codes: 3 of 512 differ (max |dcode| 3), 1 of 8 scales differ  [onnx int8 per-axis 0 "
                     "vs onnx int8 per-axis 0]"),
        out.constData());
    const auto codes = report("edited.json")["codes"];
    QCOMPARE(codes["code_mismatches"].get<int>(), m_manifest["edited_mismatches"].get<int>());
    QCOMPARE(codes["max_code_diff"].get<int>(), m_manifest["edited_max_diff"].get<int>());
    QCOMPARE(codes["code_scale_mismatches"].get<int>(), m_manifest["edited_scale_mismatches"].get<int>());
    QCOMPARE(codes["code_zero_point_mismatches"].get<int>(), 0);
    // `check` gates on them.
    const QByteArray fails = cli({QStringLiteral("check"), QStringLiteral("edited.json"),
                                  QStringLiteral("--rule"), QStringLiteral("code_mismatches > 2")},
                                 1);
    QVERIFY2(fails.contains("code_mismatches > 2 (code_mismatches = 3)"), fails.constData());
    cli({QStringLiteral("check"), QStringLiteral("edited.json"), QStringLiteral("--rule"),
         QStringLiteral("max_code_diff > 3")},
        0);
}

void TestDiffCodes::requantizeAgainstQdq() {
    if (!QUANTLENS_HAVE_ONNX) QSKIP("this build reads no ONNX");
    if (m_manifest.is_null()) QSKIP("python3 with onnx and numpy is not available");
    // torch's arithmetic (x * fl32(1 / s), half to even) on onnxruntime's own scales: the midpoints
    // numpy found where it rounds otherwise than onnxruntime's x / s.
    const QStringList torch{QStringLiteral("--requantize"),
                            QStringLiteral("--preset"),
                            QStringLiteral("torch"),
                            QStringLiteral("--axis"),
                            QStringLiteral("0"),
                            QStringLiteral("--calib"),
                            QStringLiteral("file"),
                            QStringLiteral("--scale"),
                            QStringLiteral("qdq.onnx:fc.weight_scale")};
    cli(QStringList{QStringLiteral("diff"), QStringLiteral("float.onnx"), QStringLiteral("qdq.onnx"),
                    QStringLiteral("--report"), QStringLiteral("torch.json")} +
            torch,
        0);
    auto codes = report("torch.json")["codes"];
    QCOMPARE(codes["format"].get<std::string>(), std::string("quantlens torch int8 per-channel"));
    QCOMPARE(codes["compared"].get<int>(), m_manifest["codes"].get<int>());
    QCOMPARE(codes["code_mismatches"].get<int>(), m_manifest["torch_mismatches"].get<int>());
    QVERIFY(m_manifest["torch_mismatches"].get<int>() > 0);
    QCOMPARE(codes["max_code_diff"].get<int>(), m_manifest["torch_max_diff"].get<int>());
    QCOMPARE(codes["code_scale_mismatches"].get<int>(), 0);
    // x̂ itself re-quantized with its own scales gives back its codes.
    cli(QStringList{QStringLiteral("diff"), QStringLiteral("qdq.onnx"), QStringLiteral("qdq.onnx"),
                    QStringLiteral("--report"), QStringLiteral("self.json")} +
            torch,
        0);
    codes = report("self.json")["codes"];
    QCOMPARE(codes["code_mismatches"].get<int>(), 0);
    // Calibrated by torch's absmax instead: the scales are torch's, not onnxruntime's.
    cli({QStringLiteral("diff"), QStringLiteral("float.onnx"), QStringLiteral("qdq.onnx"),
         QStringLiteral("--requantize"), QStringLiteral("--axis"), QStringLiteral("0"),
         QStringLiteral("--report"), QStringLiteral("absmax.json")},
        0);
    codes = report("absmax.json")["codes"];
    QCOMPARE(codes["scales"].get<int>(), m_manifest["scales"].get<int>());
    QVERIFY(codes["code_scale_mismatches"].get<int>() > 0);
}

void TestDiffCodes::requantizeRefusals() {
    if (!QUANTLENS_HAVE_ONNX) QSKIP("this build reads no ONNX");
    if (m_manifest.is_null()) QSKIP("python3 with onnx and numpy is not available");
    // Another grid: said, and no code figures.
    QByteArray out =
        cli({QStringLiteral("diff"), QStringLiteral("float.onnx"), QStringLiteral("qdq_uint8.onnx"),
             QStringLiteral("--requantize"), QStringLiteral("--report"), QStringLiteral("u8.json")},
            0);
    QVERIFY2(
        out.contains("codes not compared: quantlens torch int8 per-channel and onnx uint8 per-tensor: the "
                     "code grids differ (int8 and uint8)"),
        out.constData());
    QVERIFY(report("u8.json").contains("stats") && !report("u8.json").contains("codes"));
    // B holds no codes.
    out = cli({QStringLiteral("diff"), QStringLiteral("float.onnx"), QStringLiteral("float.onnx"),
               QStringLiteral("--requantize")},
              0);
    QVERIFY2(out.contains("codes not compared: fc.weight is not stored quantized in B"), out.constData());
    // A spec that cannot be planned: the reason, naming the file and tensor.
    out = cli({QStringLiteral("diff"), QStringLiteral("float.onnx"), QStringLiteral("qdq.onnx"),
               QStringLiteral("--requantize"), QStringLiteral("--scheme"), QStringLiteral("per-group"),
               QStringLiteral("--group-size"), QStringLiteral("48")},
              0);
    QVERIFY2(out.contains("codes not compared: re-quantizing A: ") && out.contains("fc.weight"),
             out.constData());
}

// QuantLens's own compressed-tensors exports read back: the codes a re-quantization with the same spec
// gives, the packed weight matched to its float original, and B's values its dequantization.
void TestDiffCodes::compressedTensorsExports() {
    const std::string model = m_dir.filePath(QStringLiteral("model.safetensors")).toStdString();
    const std::string w = "model.layers.0.mlp.up_proj.weight";
    writeSafetensors(model, {{w, Tensor::fromFloats({16, 64}, normalValues(16 * 64))}});
    const QString m = QString::fromStdString(model);
    const QStringList int8{QStringLiteral("--preset"), QStringLiteral("torch"),
                           QStringLiteral("--dtype"),  QStringLiteral("int8"),
                           QStringLiteral("--scheme"), QStringLiteral("per-channel"),
                           QStringLiteral("--axis"),   QStringLiteral("0")};
    const QStringList int4{QStringLiteral("--preset"), QStringLiteral("tensorrt"), QStringLiteral("--dtype"),
                           QStringLiteral("int4"),     QStringLiteral("--scheme"), QStringLiteral("block"),
                           QStringLiteral("--block"),  QStringLiteral("1,32")};
    QDir(m_dir.path()).mkpath(QStringLiteral("ct8"));
    QDir(m_dir.path()).mkpath(QStringLiteral("ct4"));
    cli(QStringList{QStringLiteral("quantize"), m, QStringLiteral("--all"), QStringLiteral("--out"),
                    QStringLiteral("ct8/q.safetensors"), QStringLiteral("-q")} +
            int8,
        0);
    cli(QStringList{QStringLiteral("quantize"), m, QStringLiteral("--all"), QStringLiteral("--out"),
                    QStringLiteral("ct4/q.safetensors"), QStringLiteral("--report"),
                    QStringLiteral("q4.json"), QStringLiteral("-q")} +
            int4,
        0);
    const auto read = [&](const char* file) {
        return nlohmann::json::parse(
            qltest::readFile(m_dir.filePath(QLatin1String(file)).toStdString()))["tensors"][0];
    };
    cli(QStringList{QStringLiteral("diff"), m, QStringLiteral("ct8/q.safetensors"),
                    QStringLiteral("--requantize"), QStringLiteral("--report"), QStringLiteral("ct8.json")} +
            int8,
        0);
    auto t = read("ct8.json");
    // QuantLens's own export is read through its metadata (io/export_reader.h), whatever its layout.
    QCOMPARE(t["matched"].get<std::string>(), std::string("quantlens-export"));
    QVERIFY2(t["codes"]["format_b"].get<std::string>().rfind("quantlens export int-quantized", 0) == 0,
             t["codes"].dump().c_str());
    QCOMPARE(t["codes"]["code_mismatches"].get<int>(), 0);
    QCOMPARE(t["codes"]["code_scale_mismatches"].get<int>(), 0);
    QCOMPARE(t["codes"]["compared"].get<int>(), 16 * 64);
    const QByteArray out = cli(QStringList{QStringLiteral("diff"), m, QStringLiteral("ct4/q.safetensors"),
                                           QStringLiteral("--requantize"), QStringLiteral("--report"),
                                           QStringLiteral("ct4.json")} +
                                   int4,
                               0);
    QVERIFY2(!out.contains("_packed"), out.constData()); // matched by the source name, not the part's
    t = read("ct4.json");
    QCOMPARE(t["matched"].get<std::string>(), std::string("quantlens-export"));
    QVERIFY2(t["codes"]["format_b"].get<std::string>().rfind("quantlens export pack-quantized", 0) == 0,
             t["codes"].dump().c_str());
    QCOMPARE(t["codes"]["code_mismatches"].get<int>(), 0);
    QCOMPARE(t["codes"]["scales"].get<int>(), 16 * 2);
    // B's values are the export's dequantization: the error quantize reported for the same codes.
    const double reported = read("q4.json")["stats"]["sqnr_db"].get<double>();
    QVERIFY2(std::fabs(t["stats"]["sqnr_db"].get<double>() - reported) < 1e-9 * std::fabs(reported),
             t["stats"].dump().c_str());
    // Two exports on different grids.
    const auto ct8 = openTensorSource(m_dir.filePath(QStringLiteral("ct8/q.safetensors")).toStdString());
    const auto ct4 = openTensorSource(m_dir.filePath(QStringLiteral("ct4/q.safetensors")).toStdString());
    const auto diffs = diffAll(*ct8, *ct4);
    const TensorDiff& d = pairOf(diffs, w);
    QVERIFY(!d.codes);
    QVERIFY2(d.note.find("the code grids differ (int8 and int4)") != std::string::npos, d.note.c_str());
    // An export against itself: every code the same.
    const auto selfDiffs = diffAll(*ct4, *ct4);
    const TensorDiff& self = pairOf(selfDiffs, w + "_packed");
    QVERIFY(self.codes && self.codes->mismatches == 0 && self.stats.maxAbsError() == 0.0);
}

// Parts that do not fit: the pair fails, naming the file, the tensor and the reason.
void TestDiffCodes::craftedCompressedTensors() {
    const std::string path = m_dir.filePath(QStringLiteral("crafted.safetensors")).toStdString();
    Tensor words(DType::I32, {2, 2});
    std::memset(words.mutableData(), 0x11, 16);
    Tensor shape(DType::I64, {2});
    const std::int64_t dims[2] = {2, 16};
    std::memcpy(shape.mutableData(), dims, sizeof dims);
    writeSafetensors(path, {{"fc.weight_packed", words},
                            {"fc.weight_shape", shape},
                            {"fc.weight_scale", Tensor::fromFloats({3, 1}, std::vector<float>{1, 2, 3})}});
    const auto src = openTensorSource(path);
    const TensorDiff d = diffTensors(*src, *src, {"fc.weight_packed", "fc.weight_packed", "exact"});
    QCOMPARE(d.failure, path + ": tensor 'fc.weight_packed': compressed-tensors codes: scale [3, 1] does not "
                               "divide [2, 16] into equal groups");
    // A shape far beyond the four words (and beyond int64): refused by name, before any use.
    for (const float rows : {1e30f, 64.0f}) {
        Tensor big(DType::F32, {2});
        const float bigDims[2] = {rows, 16};
        std::memcpy(big.mutableData(), bigDims, sizeof bigDims);
        writeSafetensors(path, {{"fc.weight_packed", words},
                                {"fc.weight_shape", big},
                                {"fc.weight_scale", Tensor::fromFloats({1}, std::vector<float>{1})}});
        const auto crafted = openTensorSource(path);
        const TensorDiff e =
            diffTensors(*crafted, *crafted, {"fc.weight_packed", "fc.weight_packed", "exact"});
        QVERIFY2(e.failure.find("holds more codes than the packed words") != std::string::npos,
                 e.failure.c_str());
    }
}

QTEST_GUILESS_MAIN(TestDiffCodes)
#include "tst_diff_codes.moc"
