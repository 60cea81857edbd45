// Crafted files and names: answers that were silently wrong
// and runs that left half their outputs behind.
// - diff: NaN/Inf in either side is counted, said in the table and the report, and fails every gate
//   when it is not the same on both sides (a pair with NaN on one side only is not bit-identical).
// - plan files: a tensor or candidate listed twice, a measured cell without its compressed-tensors
//   arguments, and numbers that are not whole (1e30, 2.5) where counts are meant are refused naming
//   the file and the tensor.
// - floats from files and flags become integers only when they are whole numbers within range
//   (--group-index 1e30 was converted to INT64_MIN).
// - plan writes nothing unless everything succeeds: a failed --out leaves no report, rules or recipe.
#include "base/error.h"
#include "base/whole_number.h"
#include "cli_test_util.h"
#include "io/safetensors_writer.h"
#include "io/stored_quantization.h"
#include "job/tensor_diff.h"
#include "quant/spec_json.h"
#include "quant_test_util.h"
#include "report/model_table.h"
#include "tensor/float_formats.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <limits>

using namespace ql;
using nlohmann::json;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

std::string readText(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

// The names a folder holds (temporaries included), sorted.
QStringList entries(const QString& dir) {
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

} // namespace

class TestCraftedInputs : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void wholeNumbers();
    void diffNonFinite_data();
    void diffNonFinite();
    void diffNonFiniteBitsInOneFormat();
    void groupIndexIsChecked_data();
    void groupIndexIsChecked();
    void specJsonHoldsWholeNumbers();
    void reportCountsAreChecked();
    void zeroPointsBeyondIntegers();
    void planFileRefused_data();
    void planFileRefused();
    void planLeavesNothingOnFailure_data();
    void planLeavesNothingOnFailure();

private:
    qltest::CliRun cli(const QStringList& args) const { return qltest::runCli(args, m_dir.path()); }
    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

    QTemporaryDir m_dir;
    std::string m_model; // two planned weights, f32
    json m_plan;         // the plan `plan` wrote for it
};

void TestCraftedInputs::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = path("model.safetensors");
    writeSafetensors(m_model, {{"l0.weight", Tensor::fromFloats({16, 64}, qltest::normalValues(16 * 64, 1))},
                               {"l1.weight", Tensor::fromFloats({32, 64}, qltest::normalValues(32 * 64, 2))},
                               {"norm.weight", Tensor::fromFloats({64}, qltest::normalValues(64, 3))}});
    const auto run =
        cli({QStringLiteral("plan"), q(m_model), QStringLiteral("--bits-per-weight"), QStringLiteral("9"),
             QStringLiteral("--candidates"), QStringLiteral("int8-channel,keep"), QStringLiteral("--report"),
             QStringLiteral("plan.json"), QStringLiteral("-q")});
    QVERIFY2(run.code == 0, run.err.constData());
    m_plan = json::parse(readText(path("plan.json")));
    QCOMPARE(m_plan["tensors"].size(), std::size_t{2});
}

void TestCraftedInputs::wholeNumbers() {
    QCOMPARE(wholeNumber(4.0), std::optional<std::int64_t>(4));
    QCOMPARE(wholeNumber(-0x1p63), std::optional<std::int64_t>(std::numeric_limits<std::int64_t>::min()));
    for (double v : {1e30, 0x1p63, -0x1p64, 2.5, static_cast<double>(kInf), static_cast<double>(kNaN)})
        QVERIFY2(!wholeNumber(v), std::to_string(v).c_str());
    QCOMPARE(wholeNumber<int>(2147483647.0), std::optional<int>(2147483647));
    QVERIFY(!wholeNumber<int>(2147483648.0));
    QVERIFY(!wholeNumber<std::uint8_t>(-1.0));
    QCOMPARE(wholeNumber<std::uint64_t>(0x1p63), std::optional<std::uint64_t>(std::uint64_t{1} << 63));
    QVERIFY(!wholeNumber<std::uint64_t>(0x1p64));
    // JSON: integers within range, floats only when whole.
    QCOMPARE(wholeNumber(json(128.0)), std::optional<std::int64_t>(128));
    QCOMPARE(wholeNumber<int>(json(-3)), std::optional<int>(-3));
    QVERIFY(!wholeNumber<int>(json(std::int64_t{1} << 40)));
    QVERIFY(!wholeNumber(json(std::numeric_limits<std::uint64_t>::max())));
    QVERIFY(!wholeNumber<std::uint32_t>(json(-1)));
    QVERIFY(!wholeNumber(json(1e30)));
    QVERIFY(!wholeNumber(json("4")));
    QVERIFY(!wholeNumber(json(nullptr)));
}

// Rows: A's and B's specials at elements 5 and 9 (0: as the other side has it), and what diff counts.
void TestCraftedInputs::diffNonFinite_data() {
    QTest::addColumn<std::vector<float>>("a"); // values at 5 and 9, NaN meaning "set NaN"
    QTest::addColumn<std::vector<float>>("b");
    QTest::addColumn<int>("inA");
    QTest::addColumn<int>("inB");
    QTest::addColumn<int>("unlike");
    const float same = 0.25f; // a finite value both sides share
    QTest::addRow("nan-in-b") << std::vector<float>{same, same} << std::vector<float>{kNaN, same} << 0 << 1
                              << 1;
    QTest::addRow("nan-in-a") << std::vector<float>{kNaN, same} << std::vector<float>{same, same} << 1 << 0
                              << 1;
    QTest::addRow("inf-in-b") << std::vector<float>{same, same} << std::vector<float>{same, -kInf} << 0 << 1
                              << 1;
    QTest::addRow("inf-against-nan") << std::vector<float>{kInf, same} << std::vector<float>{kNaN, same} << 1
                                     << 1 << 1;
    QTest::addRow("inf-against-minus-inf")
        << std::vector<float>{kInf, kNaN} << std::vector<float>{-kInf, same} << 2 << 1 << 2;
    QTest::addRow("alike-on-both") << std::vector<float>{kNaN, -kInf} << std::vector<float>{kNaN, -kInf} << 2
                                   << 2 << 0;
}

void TestCraftedInputs::diffNonFinite() {
    QFETCH(std::vector<float>, a);
    QFETCH(std::vector<float>, b);
    QFETCH(int, inA);
    QFETCH(int, inB);
    QFETCH(int, unlike);
    const std::string tag = QTest::currentDataTag();
    std::vector<float> va = qltest::normalValues(8 * 8, 11), vb = va;
    va[5] = a[0], va[9] = a[1], vb[5] = b[0], vb[9] = b[1];
    const std::string fa = path(("a-" + tag + ".safetensors").c_str());
    const std::string fb = path(("b-" + tag + ".safetensors").c_str());
    writeSafetensors(fa, {{"w", Tensor::fromFloats({8, 8}, va)}});
    writeSafetensors(fb, {{"w", Tensor::fromFloats({8, 8}, vb)}});

    const auto sa = openTensorSource(fa), sb = openTensorSource(fb);
    const TensorDiff d = diffTensors(*sa, *sb, {"w", "w", "exact"});
    QVERIFY2(d.failure.empty(), d.failure.c_str());
    QCOMPARE(d.nonFiniteA, std::int64_t{inA});
    QCOMPARE(d.nonFiniteB, std::int64_t{inB});
    QCOMPARE(d.nonFiniteMismatches, std::int64_t{unlike});
    QCOMPARE(d.maxUlp, std::int64_t{0}); // every finite pair is equal
    const std::string counts = "NaN/Inf: " + std::to_string(inA) + " in A, " + std::to_string(inB) + " in B";
    QVERIFY2(d.note.find(counts) != std::string::npos, d.note.c_str());
    QCOMPARE(d.note.find("not bit-identical") != std::string::npos, unlike > 0);
    const json report = diffReport(fa, fb, {d});
    QCOMPARE(report["tensors"][0]["stats"]["non_finite_mismatches"].get<int>(), unlike);
    QCOMPARE(report["tensors"][0]["stats"]["non_finite_count_b"].get<int>(), inB);

    // The table says it; without rules the diff is a report (exit 0).
    auto run =
        cli({QStringLiteral("diff"), q(fa), q(fb), QStringLiteral("--report"), q("d-" + tag + ".json")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QByteArray::fromStdString("note: " + counts)), run.out.constData());
    // The bit-identical gate and a tolerance gate: both fail a pair with NaN/Inf unlike on the two sides.
    const QByteArray why = QByteArray::fromStdString(
        "FAIL  w: " + std::to_string(unlike) + (unlike == 1 ? " value" : " values") +
        " NaN/Inf on one side only or unlike (A holds " + std::to_string(inA) + " NaN/Inf, B " +
        std::to_string(inB) + "): not bit-identical, and left out of every figure");
    for (const QString& rule : {QStringLiteral("max_ulp > 0"), QStringLiteral("sqnr < 10")}) {
        run = cli({QStringLiteral("diff"), q(fa), q(fb), QStringLiteral("--rule"), rule});
        QCOMPARE(run.code, unlike > 0 ? 1 : 0);
        QCOMPARE(run.out.contains(why), unlike > 0);
        if (unlike > 0) QVERIFY2(run.out.contains(why), run.out.constData());
    }
    // `check` on the report gates it alike, and names the count as a metric too.
    run = cli({QStringLiteral("check"), q("d-" + tag + ".json"), QStringLiteral("--rule"),
               QStringLiteral("max_ulp > 0")});
    QCOMPARE(run.code, unlike > 0 ? 1 : 0);
    run = cli({QStringLiteral("check"), q("d-" + tag + ".json"), QStringLiteral("--rule"),
               QStringLiteral("non_finite_mismatches > 0")});
    QCOMPARE(run.code, unlike > 0 ? 1 : 0);
}

// In one format a NaN is its bits: another payload is not bit-identical; across formats both are NaN.
void TestCraftedInputs::diffNonFiniteBitsInOneFormat() {
    auto bf16 = [](std::uint16_t special) {
        Tensor t(DType::BF16, {4});
        auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
        p[0] = floatToBf16(1.0f), p[1] = special, p[2] = floatToBf16(-2.0f), p[3] = floatToBf16(0.5f);
        return t;
    };
    const std::string fa = path("nan-a.safetensors"), fb = path("nan-b.safetensors"),
                      ff = path("nan-f32.safetensors");
    writeSafetensors(fa, {{"w", bf16(0x7FC0)}});
    writeSafetensors(fb, {{"w", bf16(0x7FC1)}});
    writeSafetensors(ff, {{"w", Tensor::fromFloats({4}, std::vector<float>{1.0f, kNaN, -2.0f, 0.5f})}});
    const auto a = openTensorSource(fa), b = openTensorSource(fb), f = openTensorSource(ff);
    QCOMPARE(diffTensors(*a, *b, {"w", "w", "exact"}).nonFiniteMismatches, std::int64_t{1});
    QCOMPARE(diffTensors(*a, *a, {"w", "w", "exact"}).nonFiniteMismatches, std::int64_t{0});
    const TensorDiff across = diffTensors(*b, *f, {"w", "w", "exact"});
    QCOMPARE(across.nonFiniteA, std::int64_t{1});
    QCOMPARE(across.nonFiniteMismatches, std::int64_t{0});
}

void TestCraftedInputs::groupIndexIsChecked_data() {
    QTest::addColumn<std::vector<float>>("ends");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::addRow("whole") << std::vector<float>{3, 8} << 0 << QString();
    QTest::addRow("1e30") << std::vector<float>{3, 1e30f} << 2
                          << QStringLiteral(
                                 "entry 1 is 1.00000002e+30; entries must be whole numbers of rows");
    QTest::addRow("2^63") << std::vector<float>{0x1p63f} << 2
                          << QStringLiteral(
                                 "entry 0 is 9.22337204e+18; entries must be whole numbers of rows");
    QTest::addRow("-1e30") << std::vector<float>{-1e30f, 8} << 2
                           << QStringLiteral("entry 0 is -1.00000002e+30; entries must be whole numbers");
    QTest::addRow("inf") << std::vector<float>{3, kInf} << 2
                         << QStringLiteral("entry 1 is inf; entries must");
    QTest::addRow("nan") << std::vector<float>{kNaN, 8} << 2
                         << QStringLiteral("entry 0 is nan; entries must");
    QTest::addRow("fraction") << std::vector<float>{3.5f, 8} << 2
                              << QStringLiteral("entry 0 is 3.5; entries");
}

void TestCraftedInputs::groupIndexIsChecked() {
    QFETCH(std::vector<float>, ends);
    QFETCH(int, code);
    QFETCH(QString, message);
    const std::string file =
        path(("ragged-" + std::string(QTest::currentDataTag()) + ".safetensors").c_str());
    writeSafetensors(file, {{"w", Tensor::fromFloats({8, 16}, qltest::normalValues(8 * 16, 4))},
                            {"ends", Tensor::fromFloats({static_cast<std::int64_t>(ends.size())}, ends)}});
    const auto run = cli({QStringLiteral("quantize"), q(file), QStringLiteral("--tensor"),
                          QStringLiteral("w"), QStringLiteral("--preset"), QStringLiteral("npu-group-quant"),
                          QStringLiteral("--group-index"), q(file + ":ends")});
    QVERIFY2(run.code == code, QByteArray(run.out + run.err).constData());
    if (!message.isEmpty()) {
        QVERIFY2(run.err.contains(("--group-index " + file + ":ends: ").c_str()), run.err.constData());
        QVERIFY2(QString::fromUtf8(run.err).contains(message), run.err.constData());
    }
    QVERIFY(!run.err.contains("9223372036854775808"));
}

void TestCraftedInputs::specJsonHoldsWholeNumbers() {
    QuantSpec s;
    s.preset = Preset::TensorRT;
    s.target = Target::Int4;
    s.scheme = Scheme::Block;
    s.axes.clear();
    s.block = {1, 32};
    const json good = toJson(s);
    QCOMPARE(specFromJson(good).block, (std::vector<std::int64_t>{1, 32}));
    json j = good;
    j["block"] = {1.0, 32.0}; // whole floats are the same numbers
    QCOMPARE(specFromJson(j).block, (std::vector<std::int64_t>{1, 32}));
    const std::vector<std::pair<const char*, json>> bad = {
        {"block", {1, 1e30}}, {"block", {1, 2.5}}, {"group_size", 1e30},    {"group_size", "128"},
        {"axes", {1e10}},     {"axes", {0.5}},     {"group_ends", {-1e30}}, {"block", 32},
    };
    for (const auto& [key, value] : bad) {
        j = good;
        j[key] = value;
        try {
            (void)specFromJson(j);
            QFAIL(("accepted " + std::string(key) + " = " + value.dump()).c_str());
        } catch (const QuantError& e) {
            QVERIFY2(std::string(e.what()).find(std::string("\"") + key + "\"") != std::string::npos,
                     e.what());
        }
    }
}

void TestCraftedInputs::reportCountsAreChecked() {
    json entry = {{"name", "w"},
                  {"shape", {4}},
                  {"dtype", "f32"},
                  {"stats", {{"count", 4}, {"sqnr_db", 40.0}, {"mse", 1e-4}, {"nan_count", 1.0}}}};
    QCOMPARE(modelRows(json::array({entry}), "r.json").front().nonFinite, std::int64_t{1});
    for (const json& v : {json(1e30), json(-1), json(2.5)}) {
        entry["stats"]["nan_count"] = v;
        QVERIFY_THROWS_EXCEPTION(FileError, modelRows(json::array({entry}), "r.json"));
    }
}

// A zero point from a file is a float: beyond the integers it is stored or compared in, it is refused.
void TestCraftedInputs::zeroPointsBeyondIntegers() {
    QuantSpec s;
    s.preset = Preset::AclnnQuantize;
    s.target = Target::Int8;
    s.scheme = Scheme::PerTensor;
    s.axes.clear();
    s.symmetric = false;
    const ResolvedSpec plan = resolveSpec(s, {4});
    QuantParams p;
    p.scales = {0.5f};
    p.zeroPoints = {1e30f};
    const Codes codes(plan.codeTarget, 4);
    QVERIFY_THROWS_EXCEPTION(QuantError, storedQuantizationOf(plan, p, codes));
    p.zeroPoints = {3.0f};
    QCOMPARE(storedQuantizationOf(plan, p, codes).zeroPoints, std::vector<std::int32_t>{3});

    // The CLI: aclnnQuantize takes any whole zero point; compressed-tensors stores int8 codes' range.
    const std::string params = path("zp.safetensors");
    writeSafetensors(params, {{"s", Tensor::fromFloats({1}, std::vector<float>{0.01f})},
                              {"big", Tensor::fromFloats({1}, std::vector<float>{1e30f})},
                              {"wide", Tensor::fromFloats({1}, std::vector<float>{300.0f})},
                              {"fits", Tensor::fromFloats({1}, std::vector<float>{5.0f})}});
    QDir(m_dir.path()).mkpath(QStringLiteral("zp-out"));
    for (const char* zp : {"big", "wide", "fits"}) {
        const auto run = cli(
            {QStringLiteral("quantize"), q(m_model), QStringLiteral("--tensor"), QStringLiteral("l0.weight"),
             QStringLiteral("--preset"), QStringLiteral("aclnn-quantize"), QStringLiteral("--scheme"),
             QStringLiteral("per-tensor"), QStringLiteral("--asymmetric"), QStringLiteral("--scale"),
             q(params + ":s"), QStringLiteral("--zero-point"), q(params + ":" + zp), QStringLiteral("--out"),
             QStringLiteral("zp-out/") + QLatin1String(zp) + QStringLiteral(".safetensors"),
             QStringLiteral("-q")});
        if (std::string(zp) == "fits") {
            QVERIFY2(run.code == 0, run.err.constData());
            continue;
        }
        QVERIFY2(run.code == 1, QByteArray(run.out + run.err).constData());
        QVERIFY2(run.err.contains("tensor 'l0.weight'") &&
                     run.err.contains("is outside the codes' range [-128, 127]"),
                 run.err.constData());
        QVERIFY(!QFile::exists(
            m_dir.filePath(QStringLiteral("zp-out/") + QLatin1String(zp) + QStringLiteral(".safetensors"))));
    }
}

// Rows: how the plan file is changed, and what the refusal says after "<file>: not a QuantLens plan: ".
void TestCraftedInputs::planFileRefused_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("message");
    QTest::addRow("unchanged") << QString() << QString();
    QTest::addRow("tensor-twice") << QStringLiteral("tensor-twice")
                                  << QStringLiteral("the tensor 'l0.weight' is listed twice");
    QTest::addRow("candidate-twice") << QStringLiteral("candidate-twice")
                                     << QStringLiteral("the candidate 'int8-channel' is listed twice");
    QTest::addRow("no-compressed-tensors")
        << QStringLiteral("no-compressed-tensors")
        << QStringLiteral("tensor 'l1.weight', candidate 'int8-channel': no compressed-tensors arguments");
    QTest::addRow("compressed-tensors-not-arguments")
        << QStringLiteral("compressed-tensors-text")
        << QStringLiteral("tensor 'l1.weight', candidate 'int8-channel': no compressed-tensors arguments");
    QTest::addRow("bits-1e30") << QStringLiteral("bits-1e30")
                               << QStringLiteral("tensor 'l0.weight': bits is 1e+30, not a whole number");
    QTest::addRow("shape-1e30") << QStringLiteral("shape-1e30")
                                << QStringLiteral(
                                       "tensor 'l0.weight': a dimension is 1e+30, not a whole number");
    QTest::addRow("version-1e30") << QStringLiteral("version-1e30")
                                  << QStringLiteral("version 1e+30 is not 1");
    QTest::addRow("spec-axes-1e30") << QStringLiteral("spec-axes-1e30")
                                    << QStringLiteral("spec JSON: \"axes\" holds 1e+30, not a whole number");
}

void TestCraftedInputs::planFileRefused() {
    QFETCH(QString, change);
    QFETCH(QString, message);
    json plan = m_plan;
    const std::string c = change.toStdString();
    if (c == "tensor-twice") plan["tensors"].push_back(plan["tensors"][0]);
    if (c == "candidate-twice") {
        plan["candidates"].push_back(plan["candidates"][0]);
        for (auto& t : plan["tensors"])
            t["cells"].push_back(t["cells"][0]);
    }
    if (c == "no-compressed-tensors") plan["tensors"][1]["cells"][0].erase("compressed_tensors");
    if (c == "compressed-tensors-text")
        plan["tensors"][1]["cells"][0]["compressed_tensors"] = "int-quantized";
    if (c == "bits-1e30") plan["tensors"][0]["cells"][0]["bits"] = 1e30;
    if (c == "shape-1e30") plan["tensors"][0]["shape"][0] = 1e30;
    if (c == "version-1e30") plan["version"] = 1e30;
    if (c == "spec-axes-1e30") plan["candidates"][0]["spec"]["axes"] = {1e30};
    QCOMPARE(plan["candidates"][0]["name"].get<std::string>(), std::string("int8-channel"));
    const std::string file = "crafted-" + std::string(QTest::currentDataTag()) + ".json";
    writeText(path(file.c_str()), plan.dump(1));
    const QString out = QStringLiteral("from-") + QString::fromUtf8(QTest::currentDataTag());
    const auto run =
        cli({QStringLiteral("plan"), QStringLiteral("--from"), q(file), QStringLiteral("--bits-per-weight"),
             QStringLiteral("9"), QStringLiteral("--report"), out + QStringLiteral(".json"),
             QStringLiteral("--llama-rules"), out + QStringLiteral(".txt"), QStringLiteral("--recipe"),
             out + QStringLiteral(".yaml")});
    if (message.isEmpty()) { // the file as plan wrote it: the rows below fail for their change alone
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY(QFile::exists(m_dir.filePath(out + QStringLiteral(".yaml"))));
        return;
    }
    QVERIFY2(run.code == 1, QByteArray(run.out + run.err).constData());
    const QString expected = q(file) + QStringLiteral(": not a QuantLens plan: ") + message;
    QVERIFY2(QString::fromUtf8(run.err).contains(expected), run.err.constData());
    for (const char* ext : {".json", ".txt", ".yaml"})
        QVERIFY(!QFile::exists(m_dir.filePath(out + QLatin1String(ext))));
}

// Rows: the model the plan is re-planned against, what is in out/ beforehand, and the error.
void TestCraftedInputs::planLeavesNothingOnFailure_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("config"); // out/config.json beforehand (empty: none)
    QTest::addColumn<QString>("message");
    QTest::addRow("succeeds") << QStringLiteral("same") << QString() << QString();
    QTest::addRow("shape-differs") << QStringLiteral("shape") << QString()
                                   << QStringLiteral(
                                          "l1.weight: its shape [32, 32] is not the plan's [32, 64]");
    QTest::addRow("tensor-missing") << QStringLiteral("missing") << QString()
                                    << QStringLiteral("l1.weight: the plan names it and the file lacks it");
    QTest::addRow("foreign-config") << QStringLiteral("same") << QStringLiteral("{\"model_type\": \"other\"}")
                                    << QStringLiteral("config.json");
}

void TestCraftedInputs::planLeavesNothingOnFailure() {
    QFETCH(QString, model);
    QFETCH(QString, config);
    QFETCH(QString, message);
    const std::string tag = QTest::currentDataTag();
    const QString dir = m_dir.filePath(QStringLiteral("half-") + q(tag));
    QVERIFY(QDir().mkpath(dir + QStringLiteral("/out")));
    std::string file = m_model;
    if (model != QStringLiteral("same")) {
        file = QString(dir + QStringLiteral("/other.safetensors")).toStdString();
        std::vector<NamedTensor> tensors = {
            {"l0.weight", Tensor::fromFloats({16, 64}, qltest::normalValues(16 * 64, 1))}};
        if (model == QStringLiteral("shape"))
            tensors.push_back({"l1.weight", Tensor::fromFloats({32, 32}, qltest::normalValues(32 * 32, 2))});
        writeSafetensors(file, tensors);
    }
    if (!config.isEmpty())
        writeText(QString(dir + QStringLiteral("/out/config.json")).toStdString(), config.toStdString());
    const QStringList before = entries(dir), beforeOut = entries(dir + QStringLiteral("/out"));
    const auto run =
        qltest::runCli({QStringLiteral("plan"), q(file), QStringLiteral("--from"),
                        m_dir.filePath(QStringLiteral("plan.json")), QStringLiteral("--bits-per-weight"),
                        QStringLiteral("9"), QStringLiteral("--report"), QStringLiteral("replan.json"),
                        QStringLiteral("--llama-rules"), QStringLiteral("rules.txt"),
                        QStringLiteral("--recipe"), QStringLiteral("recipe.yaml"), QStringLiteral("--out"),
                        QStringLiteral("out/model.safetensors"), QStringLiteral("-q")},
                       dir);
    if (message.isEmpty()) {
        QVERIFY2(run.code == 0, run.err.constData());
        for (const char* name :
             {"replan.json", "rules.txt", "recipe.yaml", "out/model.safetensors", "out/config.json"})
            QVERIFY2(QFile::exists(dir + QLatin1Char('/') + QLatin1String(name)), name);
        return;
    }
    QVERIFY2(run.code == 1, QByteArray(run.out + run.err).constData());
    QVERIFY2(QString::fromUtf8(run.err).contains(message), run.err.constData());
    // Nothing of this run: no output, no temporary, and what was there before untouched.
    QCOMPARE(entries(dir), before);
    QCOMPARE(entries(dir + QStringLiteral("/out")), beforeOut);
    if (!config.isEmpty())
        QCOMPARE(q(readText(QString(dir + QStringLiteral("/out/config.json")).toStdString())), config);
}

QTEST_GUILESS_MAIN(TestCraftedInputs)
#include "tst_crafted_inputs.moc"
