// Fanning a model run out: the split (deterministic, balanced, every tensor once), partial reports
// that merge into the one-process report byte for byte (timings aside), --resume after a kill, the
// sharded export and its index, the Kubernetes manifest's index mapping, and every refusal.
#include "base/error.h"
#include "cli_test_util.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "job/shard.h"
#include "report/report_format.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

using namespace ql;

namespace {

const QString kModel = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");

using Run = qltest::CliRun;
using qltest::runCli;

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A report's text without its timing lines: what must be equal byte for byte.
QByteArray withoutTimings(const QByteArray& report) {
    static const QRegularExpression timing(QStringLiteral("^\\s*\"(\\w+_ms|runs)\":"));
    QByteArray out;
    for (const QByteArray& line : report.split('\n'))
        if (!timing.match(QString::fromUtf8(line)).hasMatch()) out += line + '\n';
    return out;
}

std::vector<std::string> allNames(const TensorSource& source) {
    std::vector<std::string> names;
    for (const auto& t : source.tensors())
        names.push_back(t.name);
    return names;
}

// Peak resident memory of a quantlens-cli run, in KiB (-1 when it failed).
long peakRssKb(const std::vector<std::string>& args) {
    // Through GNU time, which forks the CLI from its own small process: a child spawned from this one
    // would start its peak from this process's memory (the kernel keeps the larger at exec).
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("rss"));
    QStringList argv{QStringLiteral("-f"), QStringLiteral("%M"), QStringLiteral("-o"), out,
                     QStringLiteral(QUANTLENS_CLI)};
    for (const auto& a : args)
        argv << QString::fromStdString(a);
    QProcess p;
    p.start(QStringLiteral("/usr/bin/time"), argv);
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) return -1;
    QFile f(out);
    if (!f.open(QIODevice::ReadOnly)) return -1;
    bool ok = false;
    const long kb = f.readAll().trimmed().toLong(&ok);
    return ok ? kb : -1;
}

// The sample model's names are not module ".weight"s: its exports use the operators' own layout.
const QStringList kSpec = {
    QStringLiteral("--all"), QStringLiteral("--dtype"),         QStringLiteral("int8"),
    QStringLiteral("-q"),    QStringLiteral("--export-layout"), QStringLiteral("native")};

} // namespace

class TestShard : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void parsesShardNotation_data();
    void parsesShardNotation();
    void splitCoversEveryTensorOnceAndBalances();
    void selectionDigestSeparatesNames();
    void shardsMergeIntoTheOneProcessReport();
    void mergeRefusesWhatDoesNotBelong();
    void resumeAfterKillRedoesNoFinishedTensor();
    void journalOfAnotherRunIsRefused();
    void memoryFollowsTheLargestTensor();
    void usageErrors_data();
    void usageErrors();
    void kubernetesIndexesMapToShards();

private:
    QTemporaryDir m_dir;
    QByteArray m_single; // the one-process report
};

void TestShard::initTestCase() {
    QVERIFY(m_dir.isValid());
    const Run r = runCli(QStringList{QStringLiteral("quantize"), kModel} + kSpec +
                             QStringList{QStringLiteral("--report"), QStringLiteral("single.json"),
                                         QStringLiteral("--out"), QStringLiteral("single.safetensors")},
                         m_dir.path());
    QCOMPARE(r.code, 0);
    m_single = readAll(m_dir.filePath(QStringLiteral("single.json")));
    QVERIFY(m_single.size() > 1000);
}

void TestShard::parsesShardNotation_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("index"); // -1: refused
    QTest::addColumn<int>("count");
    QTest::newRow("first of one") << "0/1" << 0 << 1;
    QTest::newRow("last of four") << "3/4" << 3 << 4;
    QTest::newRow("index = N") << "4/4" << -1 << 0;
    QTest::newRow("negative") << "-1/4" << -1 << 0;
    QTest::newRow("no slash") << "3" << -1 << 0;
    QTest::newRow("no index") << "/4" << -1 << 0;
    QTest::newRow("no count") << "1/" << -1 << 0;
    QTest::newRow("zero shards") << "0/0" << -1 << 0;
    QTest::newRow("letters") << "a/4" << -1 << 0;
    QTest::newRow("too many") << "0/1000000" << -1 << 0;
    QTest::newRow("spaces") << " 1/4" << -1 << 0;
}

void TestShard::parsesShardNotation() {
    QFETCH(QString, text);
    QFETCH(int, index);
    QFETCH(int, count);
    if (index < 0) {
        QVERIFY_THROWS_EXCEPTION(QuantError, parseShard(text.toStdString()));
        return;
    }
    const ShardSpec s = parseShard(text.toStdString());
    QCOMPARE(s.index, index);
    QCOMPARE(s.count, count);
    QCOMPARE(QString::fromStdString(toString(s)), text);
}

void TestShard::splitCoversEveryTensorOnceAndBalances() {
    const auto source = openTensorSource(kModel.toStdString());
    const std::vector<std::string> names = allNames(*source);
    std::uint64_t largest = 0;
    for (const auto& t : source->tensors())
        largest = std::max(largest, t.byteSize);
    for (int n : {1, 2, 3, 7, 64, 400}) { // 400: more shards than tensors, some empty
        std::vector<int> owner(names.size(), -1);
        std::uint64_t lightest = UINT64_MAX, heaviest = 0;
        for (int i = 0; i < n; ++i) {
            const ShardPart part = shardPart(*source, names, {i, n});
            const ShardPart again = shardPart(*source, names, {i, n});
            QCOMPARE(again.names, part.names); // the same split every time
            QCOMPARE(part.names.size(), part.positions.size());
            for (std::size_t k = 0; k < part.names.size(); ++k) {
                const auto p = static_cast<std::size_t>(part.positions[k]);
                QCOMPARE(part.names[k], names[p]);
                if (k) QVERIFY(part.positions[k] > part.positions[k - 1]); // file order
                QCOMPARE(owner[p], -1);                                    // no tensor twice
                owner[p] = i;
            }
            lightest = std::min(lightest, part.bytes);
            heaviest = std::max(heaviest, part.bytes);
        }
        for (std::size_t p = 0; p < names.size(); ++p)
            QVERIFY2(owner[p] >= 0, names[p].c_str()); // none left out
        if (n <= 7) QVERIFY2(heaviest - lightest <= largest, qPrintable(QStringLiteral("N=%1").arg(n)));
    }
}

void TestShard::selectionDigestSeparatesNames() {
    QCOMPARE(selectionDigest({"a", "bc"}), selectionDigest({"a", "bc"}));
    QVERIFY(selectionDigest({"a", "bc"}) != selectionDigest({"ab", "c"}));
    QVERIFY(selectionDigest({"a", "b"}) != selectionDigest({"b", "a"}));
    QCOMPARE(selectionDigest({"x"}).size(), std::size_t{16});
}

void TestShard::shardsMergeIntoTheOneProcessReport() {
    const QString dir = m_dir.filePath(QStringLiteral("three"));
    QVERIFY(QDir().mkpath(dir));
    for (int i = 0; i < 3; ++i) {
        const Run r =
            runCli(QStringList{QStringLiteral("quantize"), kModel} + kSpec +
                       QStringList{QStringLiteral("--shard"), QStringLiteral("%1/3").arg(i),
                                   QStringLiteral("--report"), QStringLiteral("part-%1.json").arg(i),
                                   QStringLiteral("--out"), QStringLiteral("out/model.safetensors")},
                   dir);
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(!QFile::exists(
            dir + QStringLiteral("/part-%1.json.journal").arg(i))); // gone once the part is written
    }
    // Parts in any order.
    const Run merged =
        runCli({QStringLiteral("merge"), QStringLiteral("part-2.json"), QStringLiteral("part-0.json"),
                QStringLiteral("part-1.json"), QStringLiteral("-o"), QStringLiteral("report.json")},
               dir);
    QVERIFY2(merged.code == 0, merged.err.constData());
    QVERIFY(merged.out.contains("SQNR dB"));
    const QByteArray report = readAll(dir + QStringLiteral("/report.json"));
    QCOMPARE(withoutTimings(report), withoutTimings(m_single));
    QVERIFY(report.size() > m_single.size() / 2); // timings are a few lines per tensor, not the report

    // The shards' exports open as one sharded checkpoint holding the one-process export's tensors.
    const auto sharded =
        openTensorSource(QString(dir + QStringLiteral("/out/model.safetensors.index.json")).toStdString());
    const auto single = openTensorSource(m_dir.filePath(QStringLiteral("single.safetensors")).toStdString());
    QCOMPARE(sharded->tensors().size(), single->tensors().size());
    for (const auto& t : single->tensors()) {
        const Tensor a = single->load(t.name);
        const Tensor b = sharded->load(t.name);
        QCOMPARE(b.dtype(), a.dtype());
        QCOMPARE(b.shape(), a.shape());
        QCOMPARE(b.byteSize(), a.byteSize());
        QVERIFY2(std::memcmp(a.data(), b.data(), a.byteSize()) == 0, t.name.c_str());
    }
}

void TestShard::mergeRefusesWhatDoesNotBelong() {
    const QString dir = m_dir.filePath(QStringLiteral("refusals"));
    QVERIFY(QDir().mkpath(dir));
    auto part = [&](const QString& shard, const QString& name, const QString& dtype) {
        const Run r = runCli({QStringLiteral("quantize"), kModel, QStringLiteral("--all"),
                              QStringLiteral("-q"), QStringLiteral("--dtype"), dtype,
                              QStringLiteral("--shard"), shard, QStringLiteral("--report"), name},
                             dir);
        QCOMPARE(r.code, 0);
    };
    part(QStringLiteral("0/3"), QStringLiteral("a0.json"), QStringLiteral("int8"));
    part(QStringLiteral("1/3"), QStringLiteral("a1.json"), QStringLiteral("int8"));
    part(QStringLiteral("2/3"), QStringLiteral("b2.json"), QStringLiteral("int4")); // another spec
    part(QStringLiteral("2/3"), QStringLiteral("a2.json"), QStringLiteral("int8"));
    QFile::copy(m_dir.filePath(QStringLiteral("single.json")), dir + QStringLiteral("/plain.json"));
    QFile deep(dir + QStringLiteral("/deep.json"));
    QVERIFY(deep.open(QIODevice::WriteOnly));
    deep.write(QByteArray(100000, '['));
    deep.close();
    // A part that names another file as its export index: merge must not write there.
    QFile redirect(dir + QStringLiteral("/redirect.json"));
    QVERIFY(redirect.open(QIODevice::WriteOnly));
    nlohmann::json redirected =
        nlohmann::json::parse(readAll(dir + QStringLiteral("/a0.json")).toStdString());
    redirected["shard"]["count"] = 1;
    redirected["shard"]["index"] = 0;
    redirected["shard"]["selected"] = redirected["tensors"].size();
    redirected["shard"]["positions"] = nlohmann::json::array();
    for (std::size_t i = 0; i < redirected["tensors"].size(); ++i)
        redirected["shard"]["positions"].push_back(i);
    redirected["shard"]["export"] = {{"file", "victim.safetensors"}, {"index", "victim.txt"}};
    redirect.write(QByteArray::fromStdString(redirected.dump()));
    redirect.close();
    QVERIFY(QFile::copy(
        kModel, dir + QStringLiteral("/victim.safetensors"))); // a real export, so only the index stops it
    QFile victim(dir + QStringLiteral("/victim.txt"));
    QVERIFY(victim.open(QIODevice::WriteOnly));
    victim.write("keep me");
    victim.close();
    const Run redirectedRun = runCli({QStringLiteral("merge"), QStringLiteral("redirect.json"),
                                      QStringLiteral("-o"), QStringLiteral("merged.json")},
                                     dir);
    QCOMPARE(redirectedRun.code, 1);
    QVERIFY2(redirectedRun.err.contains("index.json"), redirectedRun.err.constData());
    QCOMPARE(readAll(dir + QStringLiteral("/victim.txt")), QByteArray("keep me"));
    QVERIFY(!QFile::exists(dir + QStringLiteral("/merged.json")));

    QFile lying(dir + QStringLiteral("/lying.json"));
    QVERIFY(lying.open(QIODevice::WriteOnly));
    lying.write(
        readAll(dir + QStringLiteral("/a0.json")).replace("\"positions\": [", "\"positions\": [999999,"));
    lying.close();
    // Parts whose content is not a report's: a number written as a string, a NUL byte with text
    // after it, a name carrying a terminal escape sequence. Each refused, naming its own part.
    auto edited = [&](const char* name, const std::function<void(nlohmann::json&)>& edit,
                      const QByteArray& tail = {}) {
        nlohmann::json j = nlohmann::json::parse(readAll(dir + QStringLiteral("/a0.json")).toStdString());
        edit(j);
        QFile f(dir + QLatin1Char('/') + QLatin1String(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(j.dump()) + tail);
    };
    edited("string-sqnr.json", [](nlohmann::json& j) { // the first quantized tensor (kept ones have no stats)
        for (auto& t : j["tensors"])
            if (t.contains("stats")) {
                t["stats"]["sqnr_db"] = "43";
                break;
            }
    });
    edited(
        "nul.json", [](nlohmann::json&) {}, QByteArray("\0{{{{ garbage", 14));
    edited("escape.json", [](nlohmann::json& j) { j["tensors"][0]["name"] = "x\x1b]0;pwned\x07"; });
    edited("escape-error.json", [](nlohmann::json& j) { j["tensors"][0]["error"] = "failed\x1b[2J"; });

    const struct {
        QStringList parts;
        const char* expected;
    } cases[] = {
        {{QStringLiteral("a0.json"), QStringLiteral("a1.json")}, "shard 2 of 3 missing"},
        {{QStringLiteral("a0.json"), QStringLiteral("a1.json"), QStringLiteral("b2.json")},
         "from another run"},
        {{QStringLiteral("a0.json"), QStringLiteral("a0.json"), QStringLiteral("a1.json")}, "is also in"},
        {{QStringLiteral("plain.json")}, "not a partial report"},
        {{QStringLiteral("deep.json")}, "deep"},
        {{QStringLiteral("lying.json"), QStringLiteral("a1.json")}, "not a partial report"},
        {{QStringLiteral("nothing.json")}, "nothing.json"},
        {{QStringLiteral("string-sqnr.json"), QStringLiteral("a1.json"), QStringLiteral("a2.json")},
         "string-sqnr.json: tensor '"},
        {{QStringLiteral("nul.json"), QStringLiteral("a1.json")}, "nul.json: holds a NUL byte"},
        {{QStringLiteral("escape.json"), QStringLiteral("a1.json")}, "holds a control character"},
        {{QStringLiteral("escape-error.json"), QStringLiteral("a1.json")}, "holds a control character"},
    };
    for (const auto& c : cases) {
        const Run r = runCli(QStringList{QStringLiteral("merge")} + c.parts +
                                 QStringList{QStringLiteral("-o"), QStringLiteral("merged.json")},
                             dir);
        QVERIFY2(r.code == 1, qPrintable(c.parts.join(u' ') + QStringLiteral(": exit %1").arg(r.code)));
        QVERIFY2(r.err.contains(c.expected), r.err.constData());
        QVERIFY(!QFile::exists(dir + QStringLiteral("/merged.json"))); // nothing half-written
    }
    const Run self = runCli(
        {QStringLiteral("merge"), QStringLiteral("a0.json"), QStringLiteral("-o"), QStringLiteral("a0.json")},
        dir);
    QCOMPARE(self.code, 1);
    QVERIFY2(self.err.contains("would write over a part"), self.err.constData());
}

void TestShard::resumeAfterKillRedoesNoFinishedTensor() {
    const QString dir = m_dir.filePath(QStringLiteral("resume"));
    QVERIFY(QDir().mkpath(dir));
    const QStringList args =
        QStringList{QStringLiteral("quantize"), kModel} + kSpec +
        QStringList{QStringLiteral("--shard"),  QStringLiteral("0/1"),       QStringLiteral("--resume"),
                    QStringLiteral("--report"), QStringLiteral("part.json"), QStringLiteral("--repeat"),
                    QStringLiteral("60")};
    // Killed (SIGKILL: no handler runs) once a few tensors are in the journal.
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(QStringLiteral(QUANTLENS_CLI), args);
    QVERIFY(p.waitForStarted());
    const QString journal = dir + QStringLiteral("/part.json.journal");
    QElapsedTimer clock;
    clock.start();
    while (readAll(journal).count('\n') < 4 && clock.elapsed() < 120000 && p.state() == QProcess::Running)
        QTest::qWait(20);
    QVERIFY2(p.state() == QProcess::Running, "the run ended before it could be killed");
    ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
    p.waitForFinished();
    QVERIFY(!QFile::exists(dir + QStringLiteral("/part.json")));
    // An entry that is not one of the shard's tensors (an edited or damaged journal) is refused, not
    // reported as if it had run; likewise one whose name is not its position's tensor.
    for (const char* injected : {"{\"position\": 99999, \"entry\": {\"name\": \"injected.weight\"}}\n",
                                 "{\"position\": 0, \"entry\": {\"name\": \"injected.weight\"}}\n"}) {
        const QString edited = m_dir.filePath(QStringLiteral("resume-edited"));
        QDir(edited).removeRecursively();
        QVERIFY(QDir().mkpath(edited));
        QVERIFY(QFile::copy(journal, edited + QStringLiteral("/part.json.journal")));
        QFile f(edited + QStringLiteral("/part.json.journal"));
        QVERIFY(f.open(QIODevice::Append));
        f.write(injected);
        f.close();
        const Run refused = runCli(args, edited);
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.contains("is not one of this shard's tensors"), refused.err.constData());
        QVERIFY(!QFile::exists(edited + QStringLiteral("/part.json")));
    }
    // A journal an older QuantLens left (report format version 1: no version in its first line) holds
    // histograms on other edges: refused, not mixed into this version's report.
    {
        const QString older = m_dir.filePath(QStringLiteral("resume-older"));
        QDir(older).removeRecursively();
        QVERIFY(QDir().mkpath(older));
        QByteArray text = readAll(journal);
        const qsizetype firstEnd = text.indexOf('\n');
        nlohmann::json first = nlohmann::json::parse(text.left(firstEnd).toStdString());
        QCOMPARE(first.at("format_version").get<int>(), kReportFormatVersion);
        first.erase("format_version");
        text = QByteArray::fromStdString(first.dump()) + text.mid(firstEnd);
        QFile f(older + QStringLiteral("/part.json.journal"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
        f.close();
        const Run refused = runCli(args, older);
        QCOMPARE(refused.code, 1);
        const QByteArray why =
            QByteArray("left by a QuantLens writing report format version 1 (this one writes ") +
            QByteArray::number(kReportFormatVersion) + ")";
        QVERIFY2(refused.err.contains(why), refused.err.constData());
        QVERIFY(!QFile::exists(older + QStringLiteral("/part.json")));
    }
    // A torn last line, as a kill in the middle of a write leaves.
    QFile torn(journal);
    QVERIFY(torn.open(QIODevice::Append));
    torn.write("{\"position\": 7, \"entry\": {\"na");
    torn.close();
    const int finished = static_cast<int>(readAll(journal).count('\n')) - 1; // minus the header

    const Run resumed = runCli(args, dir);
    QVERIFY2(resumed.code == 0, resumed.err.constData());
    const QRegularExpression done(QStringLiteral("(\\d+) of (\\d+) tensors already done, (\\d+) to run"));
    const auto m = done.match(QString::fromUtf8(resumed.err));
    QVERIFY2(m.hasMatch(), resumed.err.constData());
    QCOMPARE(m.captured(1).toInt(), finished);
    QVERIFY(finished >= 3);
    QCOMPARE(m.captured(3).toInt(), m.captured(2).toInt() - finished);
    QVERIFY(!QFile::exists(journal));

    const Run merged = runCli({QStringLiteral("merge"), QStringLiteral("part.json"), QStringLiteral("-o"),
                               QStringLiteral("report.json")},
                              dir);
    QCOMPARE(merged.code, 0);
    QCOMPARE(withoutTimings(readAll(dir + QStringLiteral("/report.json"))), withoutTimings(m_single));
}

void TestShard::journalOfAnotherRunIsRefused() {
    const QString dir = m_dir.filePath(QStringLiteral("other"));
    QVERIFY(QDir().mkpath(dir));
    QFile journal(dir + QStringLiteral("/part.json.journal"));
    QVERIFY(journal.open(QIODevice::WriteOnly));
    journal.write("{\"journal\":\"quantlens report journal 1\",\"format_version\":" +
                  QByteArray::number(kReportFormatVersion) + ",\"run\":{\"file\":\"elsewhere\"}}\n");
    journal.close();
    const Run r =
        runCli(QStringList{QStringLiteral("quantize"), kModel} + kSpec +
                   QStringList{QStringLiteral("--shard"), QStringLiteral("0/2"), QStringLiteral("--resume"),
                               QStringLiteral("--report"), QStringLiteral("part.json")},
               dir);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("left by another run"), r.err.constData());
    QVERIFY(readAll(journal.fileName()).contains("elsewhere")); // not overwritten
}

// A run streams its tensors: eight times the model (same tensor size) costs a fraction of the
// tensors added, not their bytes (the mapping's pages and each report's per-group rows are let go).
void TestShard::memoryFollowsTheLargestTensor() {
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("peak memory means nothing under AddressSanitizer: its quarantine holds freed memory on purpose");
#endif
    auto model = [&](int tensors) {
        std::vector<NamedTensor> t;
        std::vector<float> v(1024 * 1024);
        for (int i = 0; i < tensors; ++i) {
            for (std::size_t k = 0; k < v.size(); ++k)
                v[k] = std::sin(0.001f * float(k) + float(i));
            t.push_back({"layer" + std::to_string(i) + ".weight", Tensor::fromFloats({1024, 1024}, v)});
        }
        std::string path = m_dir.filePath(QStringLiteral("rss-%1.safetensors").arg(tensors)).toStdString();
        writeSafetensors(path, t);
        return path;
    };
    const std::string report = m_dir.filePath(QStringLiteral("rss.json")).toStdString();
    auto rss = [&](const std::string& path) {
        return peakRssKb({"quantize", path, "--all", "-q", "--preset", "tensorrt", "--dtype", "int4",
                          "--block", "1,16", "--report", report});
    };
    const long small = rss(model(2)), large = rss(model(16));
    QVERIFY(small > 0 && large > 0);
    const long addedKb = 14 * 4096; // fourteen 4 MiB tensors more
    qInfo("peak RSS: 2 tensors %ld KiB, 16 tensors %ld KiB", small, large);
    QVERIFY2(large - small < addedKb / 4, qPrintable(QStringLiteral("grew by %1 KiB").arg(large - small)));
}

void TestShard::usageErrors_data() {
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("expected");
    QTest::newRow("resume alone") << QStringList{QStringLiteral("--resume"), QStringLiteral("--report"),
                                                 QStringLiteral("r.json")}
                                  << "--resume goes with --shard";
    QTest::newRow("shard without report")
        << QStringList{QStringLiteral("--shard"), QStringLiteral("0/2")} << "--report PART.json";
    QTest::newRow("shard with csv") << QStringList{QStringLiteral("--shard"), QStringLiteral("0/2"),
                                                   QStringLiteral("--report"), QStringLiteral("r.csv")}
                                    << "--report PART.json";
    QTest::newRow("shard past N") << QStringList{QStringLiteral("--shard"), QStringLiteral("2/2"),
                                                 QStringLiteral("--report"), QStringLiteral("r.json")}
                                  << "numbered 0 to 1";
    QTest::newRow("shard and strict")
        << QStringList{QStringLiteral("--shard"), QStringLiteral("0/2"), QStringLiteral("--strict"),
                       QStringLiteral("--report"), QStringLiteral("r.json")}
        << "--strict";
    QTest::newRow("shard to hdf5") << QStringList{QStringLiteral("--shard"),  QStringLiteral("0/2"),
                                                  QStringLiteral("--report"), QStringLiteral("r.json"),
                                                  QStringLiteral("--out"),    QStringLiteral("w.h5")}
                                   << ".safetensors";
}

void TestShard::usageErrors() {
    QFETCH(QStringList, extra);
    QFETCH(QString, expected);
    const Run r = runCli(QStringList{QStringLiteral("quantize"), kModel} + kSpec + extra, m_dir.path());
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(expected.toUtf8()), r.err.constData());
}

// The manifest's completions, its --shard argument and its report name, with each completion index
// put in as the BackendTask controller does: every pod gets its own shard and part, and together they
// cover the model.
void TestShard::kubernetesIndexesMapToShards() {
    const QByteArray yaml =
        readAll(QStringLiteral(QUANTLENS_SOURCE_DIR "/scripts/kubernetes/quantize-indexed-job.yaml"));
    QVERIFY(yaml.contains("completionMode: Indexed"));
    const auto completions =
        QRegularExpression(QStringLiteral("\\n\\s*completions:\\s*(\\d+)")).match(QString::fromUtf8(yaml));
    QVERIFY(completions.hasMatch());
    const int n = completions.captured(1).toInt();
    const auto shardArg = QRegularExpression(QStringLiteral("- --shard\\s*\\n\\s*- \"([^\"]+)\""))
                              .match(QString::fromUtf8(yaml));
    const auto reportArg = QRegularExpression(QStringLiteral("- --report\\s*\\n\\s*- \"([^\"]+)\""))
                               .match(QString::fromUtf8(yaml));
    QVERIFY(shardArg.hasMatch() && reportArg.hasMatch());
    QVERIFY(yaml.contains("- --resume"));

    const auto source = openTensorSource(kModel.toStdString());
    const std::vector<std::string> names = allNames(*source);
    std::set<std::string> covered, reports;
    std::size_t total = 0;
    for (int index = 0; index < n; ++index) {
        const QString i = QString::number(index);
        const ShardSpec s = parseShard(QString(shardArg.captured(1))
                                           .replace(QStringLiteral("$(JOB_COMPLETION_INDEX)"), i)
                                           .toStdString());
        QCOMPARE(s.index, index);
        QCOMPARE(s.count, n);
        reports.insert(QString(reportArg.captured(1))
                           .replace(QStringLiteral("$(JOB_COMPLETION_INDEX)"), i)
                           .toStdString());
        const ShardPart part = shardPart(*source, names, s);
        covered.insert(part.names.begin(), part.names.end());
        total += part.names.size();
    }
    QCOMPARE(reports.size(), static_cast<std::size_t>(n)); // no two pods write one part
    QCOMPARE(covered.size(), names.size());
    QCOMPARE(total, names.size());
    const QByteArray merge =
        readAll(QStringLiteral(QUANTLENS_SOURCE_DIR "/scripts/kubernetes/quantlens-merge-job.yaml"));
    QVERIFY(merge.contains("merge part-*.json"));
}

QTEST_GUILESS_MAIN(TestShard)
#include "tst_shard.moc"
