// Code comparison (with the explained cause), the whole-model table and the JSON / CSV reports.
#include "analysis/comparison.h"
#include "base/error.h"
#include "quant/reference.h"
#include "report/model_table.h"
#include "report/report.h"
#include "tensor/float_formats.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>

using namespace ql;

namespace {

ResolvedSpec perTensorPlan(Preset preset, Target target, std::int64_t n, bool symmetric = true) {
    QuantSpec spec;
    spec.preset = preset;
    spec.target = target;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.symmetric = symmetric;
    spec.calibration.method = CalibMethod::Explicit;
    return resolveSpec(spec, {n});
}

TensorReport reportOf(const std::string& name, const ResolvedSpec& plan, const QuantParams& params,
                      const std::vector<float>& x) {
    TensorReport r;
    r.name = name;
    r.shape = plan.shape;
    r.plan = plan;
    r.backend = "cpu-reference";
    r.params = params;
    r.analysis = analyze(plan, params, quantizeReference(plan, params, x), x);
    return r;
}

} // namespace

class TestAnalysisReport : public QObject {
    Q_OBJECT
private slots:
    void ulpDistance_data();
    void ulpDistance();
    void reciprocalVersusDivision();
    void zeroPointStage();
    void identicalResults();
    void modelTableWorstFirst();
    void jsonSchema();
    void csvOneRowPerTensor();
    void jsonWrittenATensorAtATime();
};

void TestAnalysisReport::ulpDistance_data() {
    QTest::addColumn<float>("a");
    QTest::addColumn<float>("b");
    QTest::addColumn<qint64>("ulp");
    QTest::addRow("equal") << 1.0f << 1.0f << qint64(0);
    QTest::addRow("signed-zeros") << 0.0f << -0.0f << qint64(0);
    QTest::addRow("next-up") << 1.0f << std::nextafter(1.0f, 2.0f) << qint64(1);
    QTest::addRow("across-zero") << floatFromBits(1) << -floatFromBits(1) << qint64(2);
    QTest::addRow("three") << 0.5f << floatFromBits(floatBits(0.5f) + 3) << qint64(3);
    // MX's scale of a block holding a NaN is NaN on both sides: the same scale.
    QTest::addRow("same-nan") << floatFromBits(0x7FC00000u) << floatFromBits(0x7FC00000u) << qint64(0);
    QTest::addRow("nan-and-number") << floatFromBits(0x7FC00000u) << 1.0f
                                    << qint64(std::numeric_limits<std::int64_t>::max());
}

void TestAnalysisReport::ulpDistance() {
    QFETCH(float, a);
    QFETCH(float, b);
    QFETCH(qint64, ulp);
    QCOMPARE(ql::ulpDistance(a, b), ulp);
}

void TestAnalysisReport::reciprocalVersusDivision() {
    // spec V-Q5 / V-A3: torch 128, aclnnQuantize 127 for the same quint8 scale.
    const float x0 = floatFromBits(0x3E8C41DB);
    const std::vector<float> x{x0, 0.1f, 0.2f};
    const ResolvedSpec a = perTensorPlan(Preset::Torch, Target::UInt8, 3, false);
    const ResolvedSpec b = perTensorPlan(Preset::AclnnQuantize, Target::UInt8, 3, false);
    QuantParams p;
    p.scales = {floatFromBits(0x3B0CCEAA)};
    p.zeroPoints = {0.0f};
    const Codes ca = quantizeReference(a, p, x), cb = quantizeReference(b, p, x);
    const Comparison c = compareResults("torch", a, p, ca, "aclnn-quantize", b, p, cb, x);
    QCOMPARE(c.mismatched, 1);
    QCOMPARE(c.firstMismatch, 0);
    QCOMPARE(c.examples.front().codeA, 128);
    QCOMPARE(c.examples.front().codeB, 127);
    QCOMPARE(c.codeDiff.at(-1), 1);
    QCOMPARE(c.scaleMismatches, 0);
    QVERIFY(!c.causes.empty());
    QCOMPARE(c.causes.front().name, std::string("scale-op"));
    QCOMPARE(c.causes.front().explained, 1);
    QVERIFY2(c.verdict.find("reciprocal") != std::string::npos && c.verdict.find("divi") != std::string::npos,
             c.verdict.c_str());
}

void TestAnalysisReport::zeroPointStage() {
    // pypto (zp before rounding) vs a custom convention adding it after: x*s = 2.5, zp = 0.5.
    // Before: RNE(3.0) = 3; after: RNE(2.5) + 0.5 = 2.5 -> clamps as 2.5 -> code 2.
    QuantSpec spec;
    spec.preset = Preset::Custom;
    spec.target = Target::UInt8;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.symmetric = false;
    spec.calibration.method = CalibMethod::Explicit;
    Convention before;
    before.scaleOp = ScaleOp::Multiply;
    before.zeroPoint = ZeroPointStage::BeforeRounding;
    Convention after = before;
    after.zeroPoint = ZeroPointStage::AfterRounding;
    spec.custom = before;
    const ResolvedSpec a = resolveSpec(spec, {2});
    spec.custom = after;
    const ResolvedSpec b = resolveSpec(spec, {2});
    QuantParams p;
    p.scales = {1.0f};
    p.zeroPoints = {0.5f};
    const std::vector<float> x{2.5f, 10.0f};
    const Codes ca = quantizeReference(a, p, x), cb = quantizeReference(b, p, x);
    const Comparison c = compareResults("before", a, p, ca, "after", b, p, cb, x);
    QVERIFY(c.mismatched >= 1);
    QCOMPARE(c.causes.front().name, std::string("zero-point-stage"));
    QVERIFY(c.verdict.find("zero point") != std::string::npos);
}

void TestAnalysisReport::identicalResults() {
    const std::vector<float> x{1, 2, 3};
    const ResolvedSpec a = perTensorPlan(Preset::Torch, Target::Int8, 3);
    QuantParams p;
    p.scales = {0.1f};
    QuantParams q = p;
    q.scales[0] = std::nextafter(0.1f, 1.0f);
    const Codes codes = quantizeReference(a, p, x);
    const Comparison c = compareResults("a", a, p, codes, "b", a, q, codes, x);
    QCOMPARE(c.mismatched, 0);
    QCOMPARE(c.scaleMismatches, 1);
    QCOMPARE(c.maxScaleUlp, 1);
    QVERIFY(c.verdict.find("All 3 codes agree") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(QuantError, compareResults("a", a, p, codes, "b",
                                                        perTensorPlan(Preset::Torch, Target::Int8, 2), p,
                                                        Codes(Target::Int8, 2), x));
}

void TestAnalysisReport::modelTableWorstFirst() {
    const ResolvedSpec plan = perTensorPlan(Preset::Torch, Target::Int8, 4);
    QuantParams coarse, fine;
    coarse.scales = {0.5f};
    fine.scales = {0.01f};
    const std::vector<float> x{0.3f, -0.7f, 1.1f, 0.05f};
    std::vector<TensorReport> reports{reportOf("fine", plan, fine, x), reportOf("coarse", plan, coarse, x)};
    TensorReport failed;
    failed.name = "broken";
    failed.error = "axis 3 out of range";
    reports.push_back(failed);
    TensorReport empty = reportOf("empty", perTensorPlan(Preset::Torch, Target::Int8, 0), fine, {});
    reports.push_back(empty);
    // FP8 E4M3 without saturation turns what overflows its 448 into NaN: worse than any figure.
    QuantSpec overflowing = plan.spec;
    overflowing.preset = Preset::Custom;
    overflowing.target = Target::Fp8E4M3;
    overflowing.custom = Convention{};
    overflowing.custom->overflow = Overflow::NonSaturating;
    QuantParams tiny;
    tiny.scales = {1.0f / 1024};
    reports.push_back(reportOf("nan-out", resolveSpec(overflowing, {4}), tiny, x));
    auto rows = modelRows(reports);
    sortWorstFirst(rows);
    QCOMPARE(rows[0].name, std::string("broken"));
    QCOMPARE(rows[1].name, std::string("nan-out"));
    QCOMPARE(rows[2].name, std::string("coarse"));
    QCOMPARE(rows[3].name, std::string("fine"));
    QCOMPARE(rows[4].name, std::string("empty"));
    QCOMPARE(rows[1].nonFiniteOutputs, std::int64_t{2}); // 1.1 and -0.7; 0.3 and 0.05 fit
    sortRows(rows, ModelColumn::Name, true);
    QCOMPARE(rows[1].name, std::string("coarse"));
    const std::string table = formatModelTable(rows);
    QVERIFY(table.find("FAILED: axis 3 out of range") != std::string::npos);
    QVERIFY(table.find("\n  ! 2 values reconstructed as NaN/Inf, left out of the figures\n") !=
            std::string::npos);
    // NaN/Inf in the file are counted, and said, too.
    const auto withNan = modelRows({reportOf("nan-in", plan, fine, {0.3f, std::nanf(""), 1.1f, 0.05f})});
    QCOMPARE(nonFiniteNote(withNan[0].nonFinite, withNan[0].nonFiniteOutputs),
             std::string("1 value NaN/Inf in the file, left out of the figures"));
}

void TestAnalysisReport::jsonSchema() {
    const ResolvedSpec plan = perTensorPlan(Preset::Torch, Target::Int8, 3);
    QuantParams p;
    p.scales = {0.02f};
    std::vector<TensorReport> reports{reportOf("w", plan, p, {0.5f, -1.0f, 3.0f})};
    const nlohmann::json j = reportJson("model.safetensors", reports);
    QCOMPARE(j["file"].get<std::string>(), std::string("model.safetensors"));
    const auto& t = j["tensors"][0];
    for (const char* key :
         {"name", "shape", "dtype", "spec", "backend", "stats", "histograms", "per_channel", "timing"})
        QVERIFY2(t.contains(key), key);
    for (const char* key :
         {"mse", "rmse", "sqnr_db", "max_abs_error", "mean_abs_error", "rel_error", "cosine", "clipped_low",
          "clipped_high", "clipped_fraction", "nan_count", "inf_count", "codes_used"})
        QVERIFY2(t["stats"].contains(key), key);
    for (const char* key : {"prepare_ms", "upload_ms", "kernel_ms", "download_ms", "total_ms", "runs"})
        QVERIFY2(t["timing"].contains(key), key);
    QCOMPARE(t["stats"]["clipped_high"].get<int>(), 1); // 3.0 / 0.02 = 150 > 127
    QCOMPARE(t["per_channel"]["groups"].get<int>(), 1);
    // Infinite SQNR (exact reconstruction) is written as null, never as an invalid number.
    std::vector<TensorReport> exact{reportOf("z", plan, p, {0, 0, 0})};
    QVERIFY(reportJson("f", exact)["tensors"][0]["stats"]["sqnr_db"].is_null());
}

void TestAnalysisReport::csvOneRowPerTensor() {
    const ResolvedSpec plan = perTensorPlan(Preset::Torch, Target::Int8, 2);
    QuantParams p;
    p.scales = {0.1f};
    TensorReport failed;
    failed.name = "bad,name";
    failed.error = "no \"scale\"";
    std::vector<TensorReport> reports{reportOf("a", plan, p, {1, 2}), failed};
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("r.csv")).toStdString();
    writeReport(path, "m.safetensors", reports);
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    const int columns = static_cast<int>(lines[0].count(','));
    QCOMPARE(static_cast<int>(lines[1].count(',')), columns);
    QCOMPARE(static_cast<int>(lines[2].count(',')), columns + 1); // the one comma in "bad,name"
    QVERIFY(lines[2].startsWith("\"bad,name\""));
    QVERIFY(lines[2].endsWith("\"no \"\"scale\"\"\""));
    QVERIFY_THROWS_EXCEPTION(FileError,
                             writeReport(dir.filePath(QStringLiteral("r.txt")).toStdString(), "m", reports));
}

// The JSON report is written a tensor at a time (memory follows the largest tensor, not the model), and
// must be byte for byte what the whole tree dumps: with and without a comparison, no tensors, one, many,
// a name that is not UTF-8, and a per-channel tensor whose columns the writer prints itself.
void TestAnalysisReport::jsonWrittenATensorAtATime() {
    const ResolvedSpec plan = perTensorPlan(Preset::Torch, Target::Int8, 3);
    QuantParams p;
    p.scales = {0.02f};
    const std::vector<float> x{0.5f, -1.0f, 3.0f};
    TensorReport failed;
    failed.name = "bad\xff\nname";
    failed.error = "no \"scale\"";
    const Codes codes = quantizeReference(plan, p, x);
    QuantParams q = p;
    q.scales[0] = std::nextafter(0.02f, 1.0f);
    const Comparison c = compareResults("a", plan, p, codes, "b", plan, q, codes, x);
    // Per channel: more rows than a report keeps, zero points, a row holding NaN (its figures null),
    // and members on both sides of "per_channel" (a calibration note, an importance entry).
    QuantSpec spec;
    spec.target = Target::UInt8;
    spec.scheme = Scheme::PerChannel;
    spec.axes = {0};
    spec.symmetric = false;
    spec.calibration.method = CalibMethod::Explicit;
    const ResolvedSpec rowsPlan = resolveSpec(spec, {4100, 2});
    QuantParams rowParams;
    std::vector<float> rowValues;
    for (int g = 0; g < 4100; ++g) {
        rowParams.scales.push_back(0.01f * static_cast<float>(1 + g % 7));
        rowParams.zeroPoints.push_back(static_cast<float>(120 + g % 5));
        rowValues.push_back(std::sin(static_cast<float>(g)) * static_cast<float>(1 + g % 3));
        rowValues.push_back(-0.3f * static_cast<float>(g % 11));
    }
    rowValues[0] = 0; // row 0 all zero: no signal, its SQNR null
    rowValues[5] = std::nanf("");
    TensorReport rows = reportOf("rows", rowsPlan, rowParams, rowValues);
    rows.params.calibrationNote = "given";
    rows.weighted = WeightedError{0.25, 3.5, 8199, "act.h5: rows"};
    TensorReport rowless = rows; // a run that keeps no rows (a plan's): every column empty
    rowless.name = "rowless";
    rowless.analysis.clipping.keepFirstGroups(0);
    TensorReport kept;
    kept.name = "bias";
    kept.passedThrough = "a bias";
    const std::vector<std::vector<TensorReport>> cases{
        {},
        {reportOf("w", plan, p, x)},
        {reportOf("w", plan, p, x), failed, reportOf("v", plan, p, {0, 0, 0})},
        {rows, kept, rowless}};
    QTemporaryDir dir;
    int written = 0;
    for (const auto& reports : cases) {
        for (const Comparison* comparison : {static_cast<const Comparison*>(nullptr), &c}) {
            const std::string path = dir.filePath(QStringLiteral("r%1.json").arg(written++)).toStdString();
            writeReport(path, "m\xfe.safetensors", reports, comparison);
            QFile f(QString::fromStdString(path));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const std::string whole = reportJson("m\xfe.safetensors", reports, comparison)
                                          .dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                      "\n";
            QCOMPARE(f.readAll().toStdString(), whole);
        }
    }
    const nlohmann::json columns = reportJson("m", {rows})["tensors"][0]["per_channel"];
    QCOMPARE(columns["scale"].size(), std::size_t{4096});
    QVERIFY(columns["truncated"].get<bool>());
    QVERIFY(columns["sqnr_db"][0].is_null());
    QVERIFY(columns["sqnr_db"][1].is_number_float());
}

QTEST_GUILESS_MAIN(TestAnalysisReport)
#include "tst_analysis_report.moc"
