// The CI gate: rules parsed or refused with the reason, evaluated on a report's numbers exactly as
// documented (undefined values satisfy nothing, exact tensors have +inf SQNR, failed tensors and
// tensors that reconstruct finite weights as NaN/Inf always fail, kept ones are not checked), model-wide
// aggregates, comparisons, JUnit XML that parses, and the CLI's exit codes.
#include "backend_test_util.h"
#include "base/error.h"
#include "cli_test_util.h"
#include "io/safetensors_writer.h"
#include "job/job.h"
#include "job_test_util.h"
#include "report/check.h"
#include "report/report.h"
#include "report/report_format.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <sys/stat.h>

using namespace ql;
using nlohmann::json;

namespace {

json tensor(const std::string& name, double sqnr, double cosine, double maxAbs) {
    return {{"name", name},
            {"shape", {4, 4}},
            {"dtype", "f32"},
            {"stats",
             {{"count", 16},
              {"nan_count", 0},
              {"inf_count", 0},
              {"mse", 1e-4},
              {"sqnr_db", sqnr},
              {"cosine", cosine},
              {"max_abs_error", maxAbs},
              {"clipped_fraction", 0.0}}}};
}

json sampleReport() {
    json exact = tensor("exact<&\">", 0, 1, 0);
    exact["stats"]["sqnr_db"] = nullptr; // exact: +inf
    exact["stats"]["mse"] = 0.0;
    json nanOut = tensor("nan-out", 50, 0.99999, 0.0001); // fine figures, from its finite outputs only
    nanOut["stats"]["non_finite_output_count"] = 3;
    json empty = tensor("empty", 0, 0, 0);
    empty["stats"]["count"] = 0;
    empty["stats"]["sqnr_db"] = nullptr; // nothing to measure: undefined
    empty["stats"]["cosine"] = nullptr;
    return {{"file", "model.safetensors"},
            {"tensors",
             {tensor("good", 40, 0.9999, 0.0005), tensor("noisy", 25, 0.995, 0.002),
              tensor("bent", 35, 0.98, 0.01), exact, empty, nanOut,
              json{{"name", "broken"}, {"shape", {2}}, {"dtype", "f32"}, {"error", "scales do not fit"}},
              json{{"name", "ids"}, {"shape", {3}}, {"dtype", "i64"}, {"passed_through", "not floating"}}}}};
}

std::vector<CheckRule> rules(std::initializer_list<const char*> texts) {
    std::vector<CheckRule> r;
    for (const char* t : texts)
        r.push_back(CheckRule::parse(t));
    return r;
}

std::map<std::string, std::string> statuses(const CheckResult& r) {
    std::map<std::string, std::string> m;
    for (const auto& s : r.subjects)
        m[s.name] = s.status;
    return m;
}

} // namespace

class TestCheck : public QObject {
    Q_OBJECT
private slots:
    void parsesRules_data();
    void parsesRules();
    void tensorRules();
    void modelWideRules();
    void comparisonRules();
    void junitParsesAndHtmlIsSelfContained();
    void cliExitCodes();
    void unreadableReportsNeverPass();
    void runResultsReadAsTheirReport();
};

void TestCheck::parsesRules_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::newRow("one comparison") << "sqnr < 30" << true;
    QTest::newRow("canonical name") << "sqnr_db<=30" << true;
    QTest::newRow("ascend rule") << "cosine < 0.99 and max_abs > 0.001" << true;
    QTest::newRow("or") << "sqnr < 20 or clipped > 0.01" << true;
    QTest::newRow("aggregate") << "min(sqnr) < 35" << true;
    QTest::newRow("scientific") << "ratio_1e-3 > 1e-2" << true;
    QTest::newRow("infinity") << "max_abs == inf" << true;
    QTest::newRow("comparison metric") << "mismatched_codes > 0" << true;
    QTest::newRow("unknown metric") << "snr < 30" << false;
    QTest::newRow("no operator") << "sqnr 30" << false;
    QTest::newRow("double operator") << "sqnr << 30" << false;
    QTest::newRow("no number") << "sqnr <" << false;
    QTest::newRow("bad joiner") << "sqnr < 30 but cosine < 1" << false;
    QTest::newRow("unknown aggregate") << "median(sqnr) < 3" << false;
    QTest::newRow("mixed scope") << "min(sqnr) < 30 and cosine < 0.9" << false;
    QTest::newRow("mixed subjects") << "mismatched > 0 and sqnr < 30" << false;
    QTest::newRow("empty") << "   " << false;
    QTest::newRow("nan limit") << "sqnr < nan" << false;
}

void TestCheck::parsesRules() {
    QFETCH(QString, text);
    QFETCH(bool, valid);
    if (valid) {
        QCOMPARE(QString::fromStdString(CheckRule::parse(text.toStdString()).text()), text);
        return;
    }
    try {
        CheckRule::parse(text.toStdString());
        QFAIL("accepted");
    } catch (const QuantError& e) {
        QVERIFY2(std::string(e.what()).size() > 10, e.what());
    }
}

void TestCheck::tensorRules() {
    const json report = sampleReport();
    auto s = statuses(runChecks(report, rules({"sqnr < 30"})));
    QCOMPARE(s["good"], std::string("pass"));
    QCOMPARE(s["noisy"], std::string("fail"));
    QCOMPARE(s["exact<&\">"], std::string("pass")); // +inf
    QCOMPARE(s["empty"], std::string("pass"));      // undefined satisfies nothing
    QCOMPARE(s["broken"], std::string("fail"));     // did not quantize
    QCOMPARE(s["nan-out"], std::string("fail"));    // finite weights came back NaN/Inf
    QCOMPARE(s["ids"], std::string("kept"));

    s = statuses(runChecks(report, rules({"cosine < 0.99 and max_abs > 0.001"})));
    QCOMPARE(s["noisy"], std::string("pass")); // cosine fine
    QCOMPARE(s["bent"], std::string("fail"));  // both hold
    s = statuses(runChecks(report, rules({"cosine < 0.99 or sqnr < 30"})));
    QCOMPARE(s["noisy"], std::string("fail"));
    QCOMPARE(s["bent"], std::string("fail"));
    QCOMPARE(s["good"], std::string("pass"));

    const CheckResult r = runChecks(report, rules({"sqnr < 30", "max_abs > 0.001"}));
    QCOMPARE(r.failed(), 4); // noisy, bent, broken, nan-out
    for (const auto& subject : r.subjects) {
        if (subject.name == "nan-out")
            QCOMPARE(subject.failures,
                     std::vector<std::string>{"reconstructs 3 finite values as NaN or infinity"});
        if (subject.name == "noisy") {
            QCOMPARE(subject.failures.size(), std::size_t{2});
            QVERIFY(QString::fromStdString(subject.failures[0]).contains(QStringLiteral("sqnr_db = 25")));
        }
    }
}

void TestCheck::modelWideRules() {
    const json report = sampleReport();
    auto result = runChecks(report, rules({"min(sqnr) < 30"}));
    auto s = statuses(result);
    QCOMPARE(s["model"], std::string("fail")); // noisy's 25
    QCOMPARE(s["noisy"], std::string("pass")); // a model-wide rule judges the model only
    s = statuses(runChecks(report, rules({"mean(cosine) < 0.9"})));
    QCOMPARE(s["model"], std::string("pass"));
    s = statuses(runChecks(report, rules({"max(max_abs) >= 0.01"})));
    QCOMPARE(s["model"], std::string("fail"));
    QVERIFY(
        !statuses(runChecks(report, rules({"sqnr < 30"}))).count("model")); // no model-wide rule: no subject
}

void TestCheck::comparisonRules() {
    json report = {{"file", "m.safetensors"},
                   {"tensors", {tensor("w", 40, 0.999, 0.001), tensor("w", 39, 0.999, 0.001)}},
                   {"comparison", {{"a", "cpu"}, {"b", "cuda"}, {"mismatched", 3}, {"scale_mismatches", 0}}}};
    auto s = statuses(runChecks(report, rules({"mismatched_codes > 0", "sqnr < 39.5"})));
    QCOMPARE(s["w: cpu vs cuda"], std::string("fail"));
    QCOMPARE(s["w (cpu)"], std::string("pass"));
    QCOMPARE(s["w (cuda)"], std::string("fail"));
    report["comparison"]["mismatched"] = 0;
    s = statuses(runChecks(report, rules({"mismatched_codes > 0"})));
    QCOMPARE(s["w: cpu vs cuda"], std::string("pass"));
    QVERIFY_THROWS_EXCEPTION(FileError, runChecks(json{{"file", "x"}}, rules({"sqnr < 1"})));
}

void TestCheck::junitParsesAndHtmlIsSelfContained() {
    const json report = sampleReport();
    const auto r = rules({"sqnr < 30", "min(sqnr) < 20"});
    const CheckResult result = runChecks(report, r);
    QXmlStreamReader xml(QByteArray::fromStdString(junitXml(result, r)));
    int cases = 0, failures = 0;
    QString declaredFailures;
    QStringList names;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement()) continue;
        if (xml.name() == QLatin1String("testsuite"))
            declaredFailures = xml.attributes().value(QLatin1String("failures")).toString();
        if (xml.name() == QLatin1String("testcase")) {
            ++cases;
            names << xml.attributes().value(QLatin1String("name")).toString();
        }
        if (xml.name() == QLatin1String("failure")) ++failures;
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(cases, 8); // seven tensors (the kept one is not a case) and the model
    QCOMPARE(failures, result.failed());
    QCOMPARE(declaredFailures.toInt(), result.failed());
    QVERIFY(names.contains(QStringLiteral("exact<&\">"))); // escaped and read back

    const std::string html = checkHtml(report, result, r);
    QVERIFY(html.find("<!DOCTYPE html>") == 0);
    QVERIFY(html.find("exact&lt;&amp;&quot;&gt;") != std::string::npos);
    QVERIFY(html.find("<script") == std::string::npos &&
            html.find("src=") == std::string::npos); // nothing external
}

void TestCheck::cliExitCodes() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto run = [&](const QStringList& args, QByteArray* out = nullptr) {
        const qltest::CliRun r = qltest::runCli(args, dir.path());
        if (out) *out = r.out + r.err;
        return r.code;
    };
    const QString model = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
    QCOMPARE(run({QStringLiteral("quantize"), model, QStringLiteral("--all"), QStringLiteral("-q"),
                  QStringLiteral("--report"), QStringLiteral("r.json")}),
             0);
    QFile rulesFile(dir.filePath(QStringLiteral("rules.txt")));
    QVERIFY(rulesFile.open(QIODevice::WriteOnly));
    rulesFile.write("# the gate\nsqnr < 20   # far below int8's\n\ncosine < 0.9 and max_abs > 0.1\n");
    rulesFile.close();
    QByteArray out;
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("r.json"), QStringLiteral("--rules"),
                  QStringLiteral("rules.txt"), QStringLiteral("--junit"), QStringLiteral("j.xml"),
                  QStringLiteral("--html"), QStringLiteral("h.html")},
                 &out),
             0);
    QVERIFY2(out.contains("0 of 54 failed (2 rules)"), out.constData()); // the weights: 53 convs and the fc
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("j.xml"))) &&
            QFile::exists(dir.filePath(QStringLiteral("h.html"))));
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("r.json"), QStringLiteral("--rule"),
                  QStringLiteral("sqnr < 43.5")},
                 &out),
             1);
    QVERIFY2(out.contains("FAIL  conv2d_44.w_0: sqnr < 43.5"), out.constData());
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("r.json"), QStringLiteral("--rule"),
                  QStringLiteral("snr < 3")},
                 &out),
             2);
    QVERIFY(out.contains("unknown metric 'snr'"));
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("r.json")}), 2); // no rules
    // Outputs only to their own kind of file: the model is never replaced by a slip of the flag.
    const QByteArray modelBytes = [&] {
        QFile f(model);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    QVERIFY(QFile::copy(model, dir.filePath(QStringLiteral("m.safetensors"))));
    for (const char* flag : {"--junit", "--html"}) {
        QCOMPARE(run({QStringLiteral("check"), QStringLiteral("r.json"), QStringLiteral("--rule"),
                      QStringLiteral("sqnr < 3"), QString::fromLatin1(flag), QStringLiteral("m.safetensors")},
                     &out),
                 2);
        QVERIFY2(out.contains("m.safetensors"), out.constData());
        QFile copy(dir.filePath(QStringLiteral("m.safetensors")));
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QVERIFY(copy.readAll() == modelBytes);
    }
    // A rules "file" that is a FIFO or a device is refused, not waited on or read for ever.
    QVERIFY(::mkfifo(qPrintable(dir.filePath(QStringLiteral("fifo"))), 0600) == 0);
    for (const QString& rulesPath : {dir.filePath(QStringLiteral("fifo")), QStringLiteral("/dev/zero")}) {
        QCOMPARE(
            run({QStringLiteral("check"), QStringLiteral("r.json"), QStringLiteral("--rules"), rulesPath},
                &out),
            1);
        QVERIFY2(out.contains("not a regular file"), out.constData());
    }
    QFile big(dir.filePath(QStringLiteral("big-rules.txt")));
    QVERIFY(big.open(QIODevice::WriteOnly));
    QVERIFY(big.resize(2 << 20));
    big.close();
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("r.json"), QStringLiteral("--rules"),
                  QStringLiteral("big-rules.txt")},
                 &out),
             1);
    QVERIFY2(out.contains("too large for a rules file"), out.constData());
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("missing.json"), QStringLiteral("--rule"),
                  QStringLiteral("sqnr < 3")}),
             1);
    // A report of a format newer than this build reads is refused, naming it, not misread; a version 1
    // report (no such key) and this build's own are read.
    QFile report(dir.filePath(QStringLiteral("r.json")));
    QVERIFY(report.open(QIODevice::ReadOnly));
    json written = json::parse(report.readAll().toStdString());
    report.close();
    QCOMPARE(written.at("format_version").get<int>(), kReportFormatVersion);
    auto checkWith = [&](const json& version) {
        json j = written;
        if (version.is_null())
            j.erase("format_version");
        else
            j["format_version"] = version;
        QFile f(dir.filePath(QStringLiteral("v.json")));
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return -1;
        f.write(QByteArray::fromStdString(j.dump()));
        f.close();
        return run({QStringLiteral("check"), QStringLiteral("v.json"), QStringLiteral("--rule"),
                    QStringLiteral("sqnr < 3")},
                   &out);
    };
    QCOMPARE(checkWith(nullptr), 0);
    QCOMPARE(checkWith(kReportFormatVersion), 0);
    QCOMPARE(checkWith(kReportFormatVersion + 1), 1);
    const QByteArray newer = QByteArray("v.json: a report of format version ") +
                             QByteArray::number(kReportFormatVersion + 1) + ", written by a newer QuantLens";
    QVERIFY2(out.contains(newer), out.constData());
    QCOMPARE(checkWith("2"), 1);
    QVERIFY2(out.contains("v.json: \"format_version\" is not a version number"), out.constData());
}

// A gate never passes what it could not read: a metric of the wrong kind is an error, not an
// undefined value, and a report of no tensor has nothing to pass.
void TestCheck::unreadableReportsNeverPass() {
    json report = sampleReport();
    report["comparison"] = {{"a", "cpu"}, {"b", "cuda"}, {"mismatched", "12345"}};
    QVERIFY_THROWS_EXCEPTION(FileError, runChecks(report, rules({"mismatched > 0"})));
    report["comparison"]["mismatched"] = nullptr; // undefined: satisfies nothing, as documented
    (void)runChecks(report, rules({"mismatched > 0"}));
    json empty = sampleReport();
    empty["tensors"] = json::array();
    try {
        (void)runChecks(empty, rules({"sqnr < 30"}));
        QFAIL("an empty report passed");
    } catch (const FileError& e) {
        QVERIFY2(std::string(e.what()).find("lists no tensor") != std::string::npos, e.what());
    }
}

// The app checks a run's results as they are (checkReportOf(file, reports)); the CLI checks the report
// they make. Both must read the same values, NaN and infinities included, and give the same verdict.
void TestCheck::runResultsReadAsTheirReport() {
    QTemporaryDir dir;
    const std::string model = dir.filePath(QStringLiteral("model.safetensors")).toStdString();
    std::vector<float> wide = qltest::normalValues(16 * 32, 1);
    wide[5] = 40.0f; // an outlier the per-tensor grid is stretched by
    writeSafetensors(model, {{"wide.weight", Tensor::fromFloats({16, 32}, wide)},
                             {"zero.weight", Tensor::fromFloats({4, 32}, std::vector<float>(4 * 32, 0.0f))},
                             {"ids", Tensor(DType::I64, {1, 8})}});
    QuantSpec spec;
    spec.preset = Preset::TensorRT;
    spec.target = Target::Int8;
    spec.scheme = Scheme::PerTensor;
    spec.calibration.method = CalibMethod::AbsMax;
    const JobRequest request = qltest::jobRequest(model, spec);
    const ModelOutcome out =
        runModelJob(request, selectTensors(*request.source, {{}, {}, true}), {true, true});
    QCOMPARE(out.reports.size(), std::size_t(3));
    QCOMPARE(out.passedThrough, 1);

    const CheckReport typed = checkReportOf(model, out.reports);
    const CheckReport read = checkReportOf(reportJson(model, out.reports));
    QCOMPARE(typed.file, read.file);
    QCOMPARE(typed.tensors.size(), read.tensors.size());
    for (std::size_t i = 0; i < typed.tensors.size(); ++i) {
        const CheckEntry &t = typed.tensors[i], &r = read.tensors[i];
        QCOMPARE(t.name, r.name);
        QCOMPARE(t.passedThrough, r.passedThrough);
        QCOMPARE(t.failed, r.failed);
        QCOMPARE(t.values.size(), r.values.size());
        for (const auto& [key, value] : t.values) {
            const double other = r.values.at(key);
            QVERIFY2(
                (std::isnan(value) && std::isnan(other)) || value == other,
                (t.name + " " + key + ": " + std::to_string(value) + " vs " + std::to_string(other)).c_str());
        }
    }
    QVERIFY(std::isinf(typed.tensors[1].values.at("sqnr_db"))); // all zeros, exact: +inf, not undefined
    QVERIFY(typed.tensors[0].values.at("clipped_fraction") == 0.0);

    const auto verdicts = [](const CheckResult& r) {
        std::vector<std::string> v;
        for (const auto& s : r.subjects) {
            v.push_back(s.name + " " + s.status);
            v.insert(v.end(), s.failures.begin(), s.failures.end());
        }
        return v;
    };
    const auto gate = rules({"sqnr < 60", "cosine < 0.9999 and max_abs > 0.001", "min(sqnr) < 100"});
    const auto typedVerdict = verdicts(runChecks(typed, gate));
    QCOMPARE(typedVerdict, verdicts(runChecks(read, gate)));
    QVERIFY(std::find(typedVerdict.begin(), typedVerdict.end(), "wide.weight fail") != typedVerdict.end());
    QVERIFY(std::find(typedVerdict.begin(), typedVerdict.end(), "zero.weight pass") != typedVerdict.end());
}

QTEST_GUILESS_MAIN(TestCheck)
#include "tst_check.moc"
