// Reports read back: every entry a run writes rebuilds into the structures the pages draw, and
// writing those again gives the same JSON (statistics exact from their accumulators, histograms,
// per-group rows, codes, timing). And a whole-model run's bounded reports write what full ones do.
#include "backend_test_util.h"
#include "base/error.h"
#include "io/safetensors_writer.h"
#include "job/job.h"
#include "job_test_util.h"
#include "report/model_table.h"
#include "report/report_read.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace ql;

namespace {

QuantSpec makeSpec(Preset p, Target t, Scheme s, std::vector<int> axes, bool symmetric = true) {
    return qltest::calibratedSpec(p, t, s, std::move(axes), symmetric);
}

// Writing ignores timings' other phases' minima; the rest must be identical text.
std::string text(const TensorReport& r) {
    return toJson(r).dump(1);
}

} // namespace

class TestReportRead : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void entriesReadBackAsWritten_data();
    void entriesReadBackAsWritten();
    void boundedReportsWriteTheSame();
    void malformedEntriesAreRefused();
    void craftedOctaveBinsAreDropped();

private:
    JobRequest request(const QuantSpec& spec) const;
    QTemporaryDir m_dir;
    std::string m_model;
};

void TestReportRead::initTestCase() {
    m_model = m_dir.filePath(QStringLiteral("model.safetensors")).toStdString();
    std::vector<NamedTensor> t;
    t.push_back({"fc.weight", Tensor::fromFloats({64, 96}, qltest::normalValues(64 * 96, 1))});
    t.push_back(
        {"tall.weight", Tensor::fromFloats({5000, 32}, qltest::normalValues(5000 * 32, 2))}); // > 4096 rows
    t.push_back({"half.weight", qltest::tensorOf(qltest::normalValues(32 * 64, 3), {32, 64}, DType::BF16)});
    t.push_back({"fc.bias", Tensor::fromFloats({64}, qltest::normalValues(64, 4))});
    t.push_back({"position_ids", Tensor(DType::I64, {1, 16})});
    writeSafetensors(m_model, t);
}

JobRequest TestReportRead::request(const QuantSpec& spec) const {
    return qltest::jobRequest(m_model, spec);
}

void TestReportRead::entriesReadBackAsWritten_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::newRow("tensorrt int8 per-channel")
        << makeSpec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0});
    QTest::newRow("torch uint8 asymmetric")
        << makeSpec(Preset::Torch, Target::UInt8, Scheme::PerChannel, {0}, false);
    auto block = makeSpec(Preset::TensorRT, Target::Int4, Scheme::Block, {});
    block.block = {1, 32};
    QTest::newRow("tensorrt int4 block 1x32") << block;
    QTest::newRow("fp8 per-tensor") << makeSpec(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor, {});
    QTest::newRow("mxfp4") << makeSpec(Preset::MX, Target::Fp4E2M1, Scheme::Block, {-1});
    QTest::newRow("nvfp4") << makeSpec(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {-1});
    auto entropy = makeSpec(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {});
    entropy.calibration.method = CalibMethod::Entropy;
    QTest::newRow("entropy per-tensor") << entropy;
}

void TestReportRead::entriesReadBackAsWritten() {
    QFETCH(QuantSpec, spec);
    const JobRequest r = request(spec);
    std::vector<std::string> names;
    for (const auto& t : r.source->tensors())
        names.push_back(t.name);
    const ModelOutcome out = runModelJob(r, names);
    QVERIFY(out.reports.size() == names.size());
    int quantized = 0;
    for (const TensorReport& written : out.reports) {
        const nlohmann::json j = toJson(written);
        const TensorReport read = reportFromJson(j);
        QCOMPARE(text(read), j.dump(1));
        quantized += read.quantized();
        if (!read.quantized()) continue;
        // What the pages read: the same numbers, not merely the same text.
        QCOMPARE(read.analysis.stats.sqnrDb(), written.analysis.stats.sqnrDb());
        QCOMPARE(read.analysis.stats.cosine(), written.analysis.stats.cosine());
        QCOMPARE(read.analysis.clipping.total().clippedLow, written.analysis.clipping.total().clippedLow);
        QCOMPARE(read.analysis.codes.counts(), written.analysis.codes.counts());
        QCOMPARE(read.analysis.error.counts(), written.analysis.error.counts());
        QCOMPARE(read.analysis.values.counts(), written.analysis.values.counts());
    }
    QVERIFY(quantized >= 2);
    // The whole-model table of the report equals the run's.
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& w : out.reports)
        tensors.push_back(toJson(w));
    const auto fromJson = modelRows(tensors, "report.json");
    const auto fromRun = modelRows(out.reports);
    QCOMPARE(fromJson.size(), fromRun.size());
    for (std::size_t i = 0; i < fromRun.size(); ++i) {
        QCOMPARE(fromJson[i].name, fromRun[i].name);
        QCOMPARE(fromJson[i].error, fromRun[i].error);
        QCOMPARE(fromJson[i].kept, fromRun[i].kept);
        if (!fromRun[i].error.empty() || !fromRun[i].kept.empty()) continue;
        QCOMPARE(fromJson[i].sqnrDb, fromRun[i].sqnrDb);
        QCOMPARE(fromJson[i].maxAbsError, fromRun[i].maxAbsError);
        QCOMPARE(fromJson[i].codesUsed, fromRun[i].codesUsed);
    }
}

// A model job keeps only what the report lists of each finished tensor; the report is unchanged.
void TestReportRead::boundedReportsWriteTheSame() {
    const JobRequest r = request(makeSpec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}));
    const TensorOutcome full = runTensorJob(r, "tall.weight");
    QCOMPARE(full.a.report.analysis.clipping.groups().size(), std::size_t{5000});
    const ModelOutcome model = runModelJob(r, {"tall.weight"});
    const TensorReport& bounded = model.reports.at(0);
    QCOMPARE(bounded.analysis.clipping.groups().size(), std::size_t{4096});
    QCOMPARE(bounded.params.scales.size(), std::size_t{4096});
    nlohmann::json a = toJson(full.a.report), b = toJson(bounded);
    a.erase("timing");
    b.erase("timing");
    QCOMPARE(b.dump(1), a.dump(1));
    QCOMPARE(a["per_channel"]["groups"].get<int>(), 5000);
    QVERIFY(a["per_channel"]["truncated"].get<bool>());
}

void TestReportRead::malformedEntriesAreRefused() {
    const JobRequest r = request(makeSpec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}));
    const nlohmann::json good = toJson(runTensorJob(r, "fc.weight").a.report);
    const struct {
        const char* what;
        nlohmann::json entry;
    } cases[] = {
        {"not an object", nlohmann::json::array()},
        {"no name", nlohmann::json{{"shape", {1}}}},
        {"no accumulators",
         [&] {
             auto j = good;
             j["stats"].erase("accumulators");
             return j;
         }()},
        {"short column",
         [&] {
             auto j = good;
             j["per_channel"]["count"].erase(0);
             return j;
         }()},
        {"string count",
         [&] {
             auto j = good;
             j["histograms"]["error"]["counts"][0] = "7";
             return j;
         }()},
        {"bad code pair",
         [&] {
             auto j = good;
             j["histograms"]["codes"][0] = {1};
             return j;
         }()},
        {"unknown preset",
         [&] {
             auto j = good;
             j["spec"]["preset"] = "nonesuch";
             return j;
         }()},
    };
    for (const auto& c : cases) {
        bool refused = false;
        try {
            reportFromJson(c.entry);
        } catch (const FileError& e) {
            refused = std::string(e.what()).size() > 5;
        }
        QVERIFY2(refused, c.what);
    }
}

// Octave bins read back only as the writer makes them (both ends powers of two in double's normal
// range, the bins an even share of the octaves, a known scale name); other edges leave that histogram
// empty, as any malformed histogram does, and the rest of the entry is read.
void TestReportRead::craftedOctaveBinsAreDropped() {
    const JobRequest r = request(makeSpec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}));
    const nlohmann::json good = toJson(runTensorJob(r, "fc.weight").a.report);
    const nlohmann::json& h = good["histograms"]["abs_error_log"];
    QCOMPARE(h["scale"].get<std::string>(), std::string("octaves"));
    QVERIFY(reportFromJson(good).analysis.absErrorLog.binCount() > 0);
    auto edited = [&](auto edit) {
        nlohmann::json j = good;
        edit(j["histograms"]["abs_error_log"]);
        return j;
    };
    const nlohmann::json cases[] = {
        edited([](nlohmann::json& a) { a["edges"][0] = 3.0e-6; }),          // no power of two
        edited([](nlohmann::json& a) { a["edges"][0] = 4.9e-324; }),        // subnormal
        edited([](nlohmann::json& a) { a["edges"].back() = 1e308 * 1.5; }), // no power of two
        edited(
            [](nlohmann::json& a) { a["edges"].back() = a["edges"].back().get<double>() * 8; }), // 60 over 18
        edited([](nlohmann::json& a) { a["scale"] = "octavez"; }),
    };
    for (const nlohmann::json& j : cases) {
        const TensorReport read = reportFromJson(j);
        QCOMPARE(read.analysis.absErrorLog.binCount(), 0);
        QCOMPARE(read.analysis.error.binCount(), reportFromJson(good).analysis.error.binCount());
    }
}

QTEST_GUILESS_MAIN(TestReportRead)
#include "tst_report_read.moc"
