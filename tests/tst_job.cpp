// core/job, the one pipeline: tensor, compare, model and sweep jobs, and the policy both front ends
// share (failures reported and the run goes on, tensors the spec cannot apply to passed through,
// scales from a file looked up per tensor by name).
#include "accumulator_checks.h"
#include "analysis/analyzer.h"
#include "backend_test_util.h"
#include "base/error.h"
#include "base/suggest.h"
#include "builtin_backends.h"
#include "io/safetensors_source.h"
#include "io/safetensors_writer.h"
#include "job/job.h"
#include "job_test_util.h"
#include "quant/reference.h"
#include "quantlens/config.h"
#include "tensor/float_formats.h"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <random>

using namespace ql;

namespace {

using qltest::normalValues;

class Fixture {
public:
    Fixture() {
        model = dir.filePath(QStringLiteral("model.safetensors")).toStdString();
        std::vector<NamedTensor> t;
        t.push_back({"fc1.weight", Tensor::fromFloats({64, 96}, normalValues(64 * 96, 1))});
        t.push_back({"fc1.bias", Tensor::fromFloats({64}, normalValues(64, 2))});
        t.push_back({"fc2.weight", qltest::tensorOf(normalValues(32 * 64, 3), {32, 64}, DType::BF16)});
        t.push_back({"odd.weight", Tensor::fromFloats({8, 33}, normalValues(8 * 33, 4))});
        t.push_back({"position_ids", Tensor(DType::I64, {1, 16})});
        writeSafetensors(model, t);
    }
    JobRequest request(const QuantSpec& spec) const { return qltest::jobRequest(model, spec); }
    QTemporaryDir dir;
    std::string model;
};

QuantSpec int8PerChannel() {
    QuantSpec s;
    s.preset = Preset::TensorRT;
    s.target = Target::Int8;
    s.scheme = Scheme::PerChannel;
    s.axes = {0};
    s.calibration.method = CalibMethod::AbsMax;
    return s;
}

// 32-element blocks along rows: fc1.bias (1-D), odd.weight (33 columns) and the integer buffer
// cannot take them.
QuantSpec int8Blocks1x32() {
    QuantSpec s = int8PerChannel();
    s.scheme = Scheme::Block;
    s.block = {1, 32};
    return s;
}

const TensorReport& reportNamed(const ModelOutcome& o, const std::string& name) {
    for (const auto& r : o.reports)
        if (r.name == name) return r;
    qFatal("no report for %s", name.c_str());
}

} // namespace

class TestJob : public QObject {
    Q_OBJECT
private slots:
    void tensorJobReadsInPlaceAndMatchesOracle();
    void codesOnlySkipsTheStatistics();
    void modelJobPassesThroughAndContinues();
    void modelJobKeepsCodesOnlyWhenAsked();
    void exportHoldsKeptAndFailedTensors();
    void fileScalesAreLookedUpPerTensor();
    void oneTensorsScalesRefusedOnManyTensors();
    void compareJobTwoPresets();
    void sweepSkipsSizesThatDoNotFit();
    void selectionSuggestsNames();
    void cancelStopsTheModelJob();
    void progressCoversTheStatisticsPass();
    void modelJobKeepsNoCodesAndTheSameFigures();
};

// A bf16 tensor goes to the backend and the analysis as it is in the file; the result is the
// reference's codes and the oracle's statistics.
void TestJob::tensorJobReadsInPlaceAndMatchesOracle() {
    Fixture f;
    const TensorOutcome out = runTensorJob(f.request(int8PerChannel()), "fc2.weight");
    QCOMPARE(out.a.report.dtype, DType::BF16);
    QCOMPARE(out.a.bytesIn, 32.0 * 64 * 2);
    const std::vector<float> x = f.request(int8PerChannel()).source->load("fc2.weight").toFloatVector();
    const ResolvedSpec& plan = out.a.report.plan;
    QCOMPARE(out.a.codes, quantizeReference(plan, out.a.report.params, x));
    const TensorAnalysis oracle = analyzeReference(plan, out.a.report.params, out.a.codes, x);
    QCOMPARE(out.a.report.analysis.stats.count(), oracle.stats.count());
    QCOMPARE(out.a.report.analysis.stats.maxAbsError(), oracle.stats.maxAbsError());
    QCOMPARE(out.a.report.analysis.error.counts(), oracle.error.counts());
    QVERIFY(!out.b && !out.comparison);
}

// A run for codes only (diff's re-quantized side) gives the same codes and parameters and no
// statistics pass: its report's analysis is empty.
void TestJob::codesOnlySkipsTheStatistics() {
    Fixture f;
    JobRequest request = f.request(int8PerChannel());
    const TensorOutcome full = runTensorJob(request, "fc2.weight");
    request.codesOnly = true;
    const TensorOutcome codes = runTensorJob(request, "fc2.weight");
    QCOMPARE(codes.a.codes, full.a.codes);
    QCOMPARE(codes.a.report.params.scales, full.a.report.params.scales);
    QVERIFY(full.a.report.analysis.stats.count() > 0);
    QCOMPARE(codes.a.report.analysis.stats.count(), std::int64_t{0});
    QVERIFY(codes.a.report.analysis.clipping.groups().empty());
}

// Per-group 32 along the last axis: fc1.bias and odd.weight (33 columns) cannot take it, the
// integer buffer is not a weight: all three are passed through, the others quantized.
void TestJob::modelJobPassesThroughAndContinues() {
    Fixture f;
    const JobRequest r = f.request(int8Blocks1x32());
    const auto names = selectTensors(*r.source, {{}, {}, true});
    QCOMPARE(names.size(), std::size_t{5});
    std::vector<std::string> seen;
    ModelEvents events;
    events.finished = [&](const TensorReport& t) { seen.push_back(t.name); };
    const ModelOutcome out = runModelJob(r, names, {true, true}, events);
    QCOMPARE(seen, names);
    QCOMPARE(out.failed, 0);
    QCOMPARE(out.passedThrough, 3);
    QVERIFY(reportNamed(out, "fc1.weight").quantized());
    QVERIFY(reportNamed(out, "fc2.weight").quantized());
    QVERIFY(!reportNamed(out, "fc1.bias").passedThrough.empty());
    QVERIFY(QString::fromStdString(reportNamed(out, "position_ids").passedThrough)
                .contains(QLatin1String("int64")));
    QVERIFY(!reportNamed(out, "odd.weight").passedThrough.empty());
    QCOMPARE(out.quantized.size(), std::size_t{2});
    // Named by the user, a tensor the spec cannot apply to is a failure, not a pass-through.
    const ModelOutcome named = runModelJob(r, {"fc1.bias", "fc2.weight"}, {false, false});
    QCOMPARE(named.failed, 1);
    QCOMPARE(named.passedThrough, 0);
    QVERIFY(!named.reports[0].error.empty());
}

void TestJob::modelJobKeepsCodesOnlyWhenAsked() {
    Fixture f;
    const JobRequest r = f.request(int8PerChannel());
    const ModelOutcome out = runModelJob(r, {"fc1.weight", "fc2.weight"}, {false, true});
    QVERIFY(out.quantized.empty());
    QCOMPARE(out.reports.size(), std::size_t{2});
}

// --all --out on a model gives a complete checkpoint: the quantized tensors, the kept ones byte for
// byte, and the failed ones named in the metadata.
void TestJob::exportHoldsKeptAndFailedTensors() {
    Fixture f;
    const JobRequest r = f.request(int8Blocks1x32());
    ModelOutcome out = runModelJob(r, selectTensors(*r.source, {{}, {}, true}), {true, true});
    QCOMPARE(out.kept.size(), std::size_t{3});
    out.reports[0].error = "a reason"; // as if fc1.weight had failed
    const std::string file = f.dir.filePath(QStringLiteral("export.safetensors")).toStdString();
    exportSafetensors(file, out.quantized, ExportLayout::CompressedTensors, f.model, exportExtras(out));
    const auto back = openTensorSource(file);
    for (const char* name : {"fc1.bias", "position_ids", "odd.weight"}) {
        const Tensor a = r.source->load(name), b = back->load(name);
        QCOMPARE(b.dtype(), a.dtype());
        QCOMPARE(b.shape(), a.shape());
        QVERIFY(std::equal(a.data(), a.data() + a.byteSize(), b.data()));
    }
    QVERIFY(back->find("fc2.weight") && back->find("fc2.weight_scale"));
    const auto* st = dynamic_cast<const SafetensorsSource*>(back.get());
    QVERIFY(st);
    const auto meta = nlohmann::json::parse(st->metadata().at("quantlens"));
    QCOMPARE(meta["kept"].size(), std::size_t{3});
    QCOMPARE(meta["failed"][0]["name"].get<std::string>(), std::string("fc1.weight"));
    QCOMPARE(meta["failed"][0]["reason"].get<std::string>(), std::string("a reason"));
#if QUANTLENS_HAVE_HDF5
    const std::string h5 = f.dir.filePath(QStringLiteral("export.h5")).toStdString();
    exportHdf5(h5, out.quantized, f.model, exportExtras(out));
    const auto hback = openTensorSource(h5);
    const Tensor bias = hback->load("fc1.bias");
    QCOMPARE(bias.toFloatVector(), r.source->load("fc1.bias").toFloatVector());
    QVERIFY(hback->find("position_ids"));
#endif
}

// Calibration "file" over a model: each tensor reads its own <name>_scale; a tensor without one
// fails with the reason, and the run goes on.
void TestJob::fileScalesAreLookedUpPerTensor() {
    Fixture f;
    const std::string params = f.dir.filePath(QStringLiteral("params.safetensors")).toStdString();
    std::vector<float> scales(64);
    for (std::size_t i = 0; i < scales.size(); ++i)
        scales[i] = 0.01f * static_cast<float>(i + 1);
    writeSafetensors(params, {{"fc1.weight_scale", Tensor::fromFloats({64}, scales)}});
    QuantSpec s = int8PerChannel();
    s.calibration.method = CalibMethod::Explicit;
    JobRequest r = f.request(s);
    r.params.scales = params;
    const ModelOutcome out = runModelJob(r, {"fc1.weight", "fc2.weight"}, {true, true});
    QCOMPARE(out.failed, 1);
    const TensorReport& fc1 = reportNamed(out, "fc1.weight");
    QVERIFY(fc1.quantized());
    QCOMPARE(fc1.params.scales, scales);
    QVERIFY(QString::fromStdString(reportNamed(out, "fc2.weight").error)
                .contains(QLatin1String("fc2.weight_scale")));
}

void TestJob::oneTensorsScalesRefusedOnManyTensors() {
    Fixture f;
    const std::string params = f.dir.filePath(QStringLiteral("params.safetensors")).toStdString();
    writeSafetensors(params, {{"s", Tensor::fromFloats({64}, std::vector<float>(64, 0.01f))}});
    QuantSpec s = int8PerChannel();
    s.calibration.method = CalibMethod::Explicit;
    JobRequest r = f.request(s);
    r.params.scales = params + ":s";
    const ModelOutcome many = runModelJob(r, {"fc1.weight", "fc2.weight"}, {false, true});
    QCOMPARE(many.failed, 2);
    QVERIFY(QString::fromStdString(many.reports[0].error).contains(QLatin1String("belong to one tensor")));
    const ModelOutcome one = runModelJob(r, {"fc1.weight"});
    QCOMPARE(one.failed, 0);
}

void TestJob::compareJobTwoPresets() {
    Fixture f;
    QuantSpec s = int8PerChannel();
    s.preset = Preset::Torch;
    JobRequest r = f.request(s);
    r.compare = {CompareWith::Kind::Preset, {}, Preset::AclnnQuantize};
    const TensorOutcome out = runTensorJob(r, "fc1.weight");
    QVERIFY(out.b && out.comparison);
    QCOMPARE(out.a.label, std::string("torch"));
    QCOMPARE(out.b->label, std::string("aclnn-quantize"));
    QCOMPARE(out.comparison->count, 64 * 96);
}

void TestJob::sweepSkipsSizesThatDoNotFit() {
    Fixture f;
    QuantSpec s = int8PerChannel();
    s.scheme = Scheme::Block;
    s.axes.clear();
    const SweepOutcome out = runSweepJob(f.request(s), "fc1.weight", {32, 7, 48});
    QCOMPARE(out.sizes, (std::vector<std::int64_t>{32, 48}));
    QCOMPARE(out.skipped.size(), std::size_t{1});
    QCOMPARE(out.skipped[0].first, 7);
    QVERIFY_THROWS_EXCEPTION(QuantError, runSweepJob(f.request(s), "fc1.weight", {7, 5}));
}

void TestJob::selectionSuggestsNames() {
    Fixture f;
    const JobRequest r = f.request(int8PerChannel());
    try {
        selectTensors(*r.source, {{"fc1.wieght"}, {}, false});
        QFAIL("a missing name was accepted");
    } catch (const FileError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("did you mean 'fc1.weight'")), e.what());
    }
    QCOMPARE(selectTensors(*r.source, {{}, "^fc[0-9]\\.weight$", false}),
             (std::vector<std::string>{"fc1.weight", "fc2.weight"}));
    QVERIFY_THROWS_EXCEPTION(QuantError, selectTensors(*r.source, {{}, "(", false}));
    // An absolute HDF5-style path finds the tensor the inventory names relative.
    const ModelOutcome slash = runModelJob(r, selectTensors(*r.source, {{"/fc1.weight"}, {}, false}));
    QCOMPARE(slash.reports[0].name, std::string("fc1.weight"));
    QVERIFY(slash.reports[0].quantized());
    QCOMPARE(closestNames("TensorRT", {"torch", "tensorrt", "mx"}), std::vector<std::string>{"tensorrt"});
    QVERIFY(closestNames("zzz", {"torch", "tensorrt"}).empty());
}

void TestJob::cancelStopsTheModelJob() {
    Fixture f;
    ModelEvents events;
    int finished = 0;
    events.progress = [](double) { return false; };
    events.finished = [&](const TensorReport&) { ++finished; };
    QVERIFY_THROWS_EXCEPTION(
        Cancelled, runModelJob(f.request(int8PerChannel()), {"fc1.weight", "fc2.weight"}, {}, events));
    QCOMPARE(finished, 0);
}

// A tensor large enough for many slices: the bar moves through the statistics pass (the second half),
// never backwards, and a cancel there stops the job with the same figures untouched.
void TestJob::progressCoversTheStatisticsPass() {
    QTemporaryDir dir;
    const std::string model = dir.filePath(QStringLiteral("large.safetensors")).toStdString();
    writeSafetensors(model, {{"big.weight", Tensor::fromFloats({1024, 1024}, normalValues(1024 * 1024, 7))}});
    const JobRequest request = qltest::jobRequest(model, int8PerChannel());
    std::vector<double> seen;
    const TensorOutcome out = runTensorJob(request, "big.weight", [&](double done) {
        seen.push_back(done);
        return true;
    });
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QCOMPARE(seen.back(), 1.0);
    // The backend's run (its quantize loop with the statistics' first pass) always ends at the half;
    // the histogram pass moves the bar on from there (its steps depend on the threads and their timing).
    QVERIFY(std::find(seen.begin(), seen.end(), 0.5) != seen.end());
    // The same figures as a run without a progress callback.
    const TensorOutcome plain = runTensorJob(request, "big.weight");
    QCOMPARE(out.a.report.analysis.stats.sqnrDb(), plain.a.report.analysis.stats.sqnrDb());
    // Cancelled in the middle of the statistics pass: the exception, no crash, no result.
    QVERIFY_THROWS_EXCEPTION(Cancelled,
                             runTensorJob(request, "big.weight", [](double done) { return done < 0.7; }));
}

// A model job that keeps no codes (the CLI's quantize --all without --out) has the CPU backend make
// each part's codes in a buffer of its worker's: its report has the same bits as the tensor job's,
// which keeps the tensor's codes, and a cancel in the middle of its pass stops it cleanly.
void TestJob::modelJobKeepsNoCodesAndTheSameFigures() {
    QTemporaryDir dir;
    const std::string model = dir.filePath(QStringLiteral("large.safetensors")).toStdString();
    writeSafetensors(model, {{"big.weight", Tensor::fromFloats({1024, 1024}, normalValues(1024 * 1024, 9))}});
    const JobRequest request = qltest::jobRequest(model, int8PerChannel());
    QVERIFY(SlicedAnalysis::measuresInParts(resolveSpec(int8PerChannel(), {1024, 1024}), 1024 * 1024));
    const ModelOutcome whole = runModelJob(request, {"big.weight"});
    QCOMPARE(whole.reports.size(), std::size_t{1});
    QVERIFY2(whole.reports[0].error.empty(), whole.reports[0].error.c_str());
    QVERIFY(whole.quantized.empty());
    const TensorOutcome kept = runTensorJob(request, "big.weight");
    QCOMPARE(kept.a.codes.size(), std::int64_t{1024 * 1024});
    qltest::compareAnalyses(whole.reports[0].analysis, kept.a.report.analysis, true);
    ModelEvents events;
    events.progress = [](double done) { return done < 0.7; };
    QVERIFY_THROWS_EXCEPTION(Cancelled, runModelJob(request, {"big.weight"}, {}, events));
}

QTEST_GUILESS_MAIN(TestJob)
#include "tst_job.moc"
