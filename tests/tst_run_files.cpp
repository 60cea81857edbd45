// What a run writes never replaces what it reads: the one check (core/io/run_files) on its own, and
// each command that once wrote over an input, or into another model's folder, refusing before any
// work with the output, the input and the input's role named, every input left byte for byte.
#include "base/error.h"
#include "cli_test_util.h"
#include "io/run_files.h"
#include "io/tensor_source.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

using namespace ql;
using qltest::CliRun;
using qltest::runCli;

namespace {

const QString kModel = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QString errorOf(const RunFiles& files) {
    try {
        files.check();
    } catch (const FileError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

// A Hugging Face style folder: model.safetensors and model.safetensors.index.json naming it.
QByteArray makeIndexedModel(const QString& folder) {
    QDir().mkpath(folder);
    QFile::copy(kModel, folder + QStringLiteral("/model.safetensors"));
    nlohmann::json map = nlohmann::json::object();
    const auto source = openTensorSource(kModel.toStdString());
    for (const auto& t : source->tensors())
        map[t.name] = "model.safetensors";
    QByteArray index = QByteArray::fromStdString(
        nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", map}}.dump(2));
    writeAll(folder + QStringLiteral("/model.safetensors.index.json"), index);
    return index;
}

} // namespace

class TestRunFiles : public QObject {
    Q_OBJECT
private slots:
    void outputOverAnInputIsRefused();
    void linksAndSpellingsAreTheSameFile();
    void weightsStayOutOfProtectedFolders();
    void twoOutputsOfOneRunAreRefused();
    void outputsMustBeRegularFiles();
    void checkNeverWritesOverItsRules();
    void shardsNeverExportIntoTheModelsFolder();
    void mergeWritesOnlyItsOwnShardsIndex();
    void diffNeverWritesOverItsInputs();

private:
    QTemporaryDir m_dir;
};

void TestRunFiles::outputOverAnInputIsRefused() {
    const QString rules = m_dir.filePath(QStringLiteral("rules.txt"));
    writeAll(rules, "sqnr < 30\n");
    RunFiles files;
    files.input(rules.toStdString(), "the rules file");
    files.output(rules.toStdString(), "--junit");
    const QString e = errorOf(files);
    QVERIFY2(e.contains(QStringLiteral("--junit would write over the rules file")), qPrintable(e));
    RunFiles fresh;
    fresh.input(rules.toStdString(), "the rules file");
    fresh.output(m_dir.filePath(QStringLiteral("new.xml")).toStdString(), "--junit");
    QCOMPARE(errorOf(fresh), QString());
}

void TestRunFiles::linksAndSpellingsAreTheSameFile() {
    const QString target = m_dir.filePath(QStringLiteral("a.json"));
    writeAll(target, "{}");
    QVERIFY(QFile::link(target, m_dir.filePath(QStringLiteral("link.json"))));
    QVERIFY(::link(target.toUtf8().constData(),
                   m_dir.filePath(QStringLiteral("hard.json")).toUtf8().constData()) == 0);
    QDir().mkpath(m_dir.filePath(QStringLiteral("sub")));
    for (const QString& alias : {QStringLiteral("link.json"), QStringLiteral("hard.json"),
                                 QStringLiteral("sub/../a.json"), QStringLiteral("./a.json")}) {
        RunFiles files;
        files.input(target.toStdString(), "the report");
        files.output(m_dir.filePath(alias).toStdString(), "--out");
        QVERIFY2(!errorOf(files).isEmpty(), qPrintable(alias));
    }
    QVERIFY(sameFile(m_dir.filePath(QStringLiteral("new/../x.json")).toStdString(),
                     m_dir.filePath(QStringLiteral("x.json")).toStdString())); // neither exists yet
}

void TestRunFiles::weightsStayOutOfProtectedFolders() {
    const QString folder = m_dir.filePath(QStringLiteral("model"));
    QDir().mkpath(folder);
    RunFiles files;
    files.protectFolder(folder.toStdString(), "the input model's own folder");
    files.output(QString(folder + QStringLiteral("/report.json")).toStdString(),
                 "--report"); // not weights: fine
    QCOMPARE(errorOf(files), QString());
    files.weightsOutput(QString(folder + QStringLiteral("/q.safetensors.index.json")).toStdString(),
                        "the index");
    QVERIFY(errorOf(files).contains(QStringLiteral("the input model's own folder")));
}

void TestRunFiles::twoOutputsOfOneRunAreRefused() {
    RunFiles files;
    files.output(m_dir.filePath(QStringLiteral("same.xml")).toStdString(), "--junit");
    files.output(m_dir.filePath(QStringLiteral("./same.xml")).toStdString(), "--html");
    QVERIFY(errorOf(files).contains(QStringLiteral("name the same file")));
}

void TestRunFiles::outputsMustBeRegularFiles() {
    const QString fifo = m_dir.filePath(QStringLiteral("pipe.json"));
    QVERIFY(::mkfifo(fifo.toUtf8().constData(), 0600) == 0);
    QVERIFY(QFile::link(fifo, m_dir.filePath(QStringLiteral("to-pipe.json"))));
    for (const QString& out : {fifo, m_dir.filePath(QStringLiteral("to-pipe.json")), m_dir.path()}) {
        RunFiles files;
        files.output(out.toStdString(), "--report");
        QVERIFY2(errorOf(files).contains(QStringLiteral("not a regular file")), qPrintable(out));
    }
    // Through the CLI: the FIFO is left as it was (renaming over it would replace the node).
    const CliRun r = runCli({QStringLiteral("quantize"), kModel, QStringLiteral("--all"),
                             QStringLiteral("-q"), QStringLiteral("--report"), fifo},
                            m_dir.path());
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("not a regular file"), r.err.constData());
    QVERIFY(QFileInfo(fifo).isSymLink() || QFileInfo(fifo).exists());
    struct stat st {};
    QVERIFY(::stat(fifo.toUtf8().constData(), &st) == 0 && S_ISFIFO(st.st_mode));
}

void TestRunFiles::checkNeverWritesOverItsRules() {
    const QString dir = m_dir.filePath(QStringLiteral("check"));
    QDir().mkpath(dir);
    const CliRun q = runCli({QStringLiteral("quantize"), kModel, QStringLiteral("--all"),
                             QStringLiteral("-q"), QStringLiteral("--report"), QStringLiteral("r.json")},
                            dir);
    QVERIFY2(q.code == 0, q.err.constData());
    const QByteArray rules = "sqnr < 1\n";
    writeAll(dir + QStringLiteral("/rules.xml"), rules);
    const QByteArray report = readAll(dir + QStringLiteral("/r.json"));
    for (const QStringList& outputs : {QStringList{QStringLiteral("--junit"), QStringLiteral("rules.xml")},
                                       QStringList{QStringLiteral("--junit"), QStringLiteral("./rules.xml")},
                                       QStringList{QStringLiteral("--html"), QStringLiteral("r.json")},
                                       QStringList{QStringLiteral("--junit"), QStringLiteral("out.xml"),
                                                   QStringLiteral("--html"), QStringLiteral("out.xml")}}) {
        const CliRun r = runCli(QStringList{QStringLiteral("check"), QStringLiteral("r.json"),
                                            QStringLiteral("--rules"), QStringLiteral("rules.xml")} +
                                    outputs,
                                dir);
        QVERIFY2(r.code == 2 || r.code == 1, r.err.constData());
        QVERIFY2(r.err.contains("would write over") || r.err.contains("same file") ||
                     r.err.contains(".html file"),
                 r.err.constData());
        QCOMPARE(readAll(dir + QStringLiteral("/rules.xml")), rules);
        QCOMPARE(readAll(dir + QStringLiteral("/r.json")), report);
        QVERIFY(!QFile::exists(dir + QStringLiteral("/out.xml")));
    }
}

void TestRunFiles::shardsNeverExportIntoTheModelsFolder() {
    const QString folder = m_dir.filePath(QStringLiteral("hf"));
    const QByteArray index = makeIndexedModel(folder);
    QVERIFY(QFile::copy(folder + QStringLiteral("/model.safetensors.index.json"),
                        folder + QStringLiteral("/idx.json")));
    const QString work = m_dir.filePath(QStringLiteral("shardwork"));
    QDir().mkpath(work);
    for (const QString& idx : {QStringLiteral("model.safetensors.index.json"), QStringLiteral("idx.json")}) {
        const CliRun r =
            runCli({QStringLiteral("quantize"), folder + QLatin1Char('/') + idx, QStringLiteral("--all"),
                    QStringLiteral("-q"), QStringLiteral("--export-layout"), QStringLiteral("native"),
                    QStringLiteral("--shard"), QStringLiteral("0/1"), QStringLiteral("--out"),
                    folder + QStringLiteral("/model.safetensors"), QStringLiteral("--report"),
                    QStringLiteral("p0.json")},
                   work);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("the input model's own folder"), r.err.constData());
        QVERIFY(!QFile::exists(work + QStringLiteral("/p0.json")));
        QVERIFY(!QFile::exists(folder + QStringLiteral("/model-00001-of-00001.safetensors")));
    }
    QCOMPARE(readAll(folder + QStringLiteral("/model.safetensors.index.json")), index);
}

void TestRunFiles::mergeWritesOnlyItsOwnShardsIndex() {
    const QString dir = m_dir.filePath(QStringLiteral("merge"));
    QDir().mkpath(dir);
    const CliRun r =
        runCli({QStringLiteral("quantize"), kModel, QStringLiteral("--all"), QStringLiteral("-q"),
                QStringLiteral("--export-layout"), QStringLiteral("native"), QStringLiteral("--shard"),
                QStringLiteral("0/1"), QStringLiteral("--out"), QStringLiteral("out/q.safetensors"),
                QStringLiteral("--report"), QStringLiteral("p0.json")},
               dir);
    QVERIFY2(r.code == 0, r.err.constData());
    const nlohmann::json part =
        nlohmann::json::parse(readAll(dir + QStringLiteral("/p0.json")).toStdString());

    // Another model beside: its index must survive every crafted part.
    const QString other = dir + QStringLiteral("/other");
    const QByteArray otherIndex = makeIndexedModel(other);
    QVERIFY(QFile::copy(dir + QStringLiteral("/out/q-00001-of-00001.safetensors"),
                        other + QStringLiteral("/model-00001-of-00001.safetensors")));
    const struct {
        const char* name;
        std::string file, index;
        const char* expected;
    } cases[] = {
        // any .safetensors beside another model's index
        {"any-file.json", "other/model.safetensors", "other/model.safetensors.index.json",
         "not the export quantize --shard writes"},
        // the names a shard would derive, in the other model's folder, whose index maps other files
        {"derived.json", "other/model-00001-of-00001.safetensors", "other/model.safetensors.index.json",
         "another model's"},
    };
    for (const auto& c : cases) {
        nlohmann::json crafted = part;
        crafted["shard"]["export"] = {{"file", c.file}, {"index", c.index}};
        writeAll(dir + QLatin1Char('/') + QLatin1String(c.name), QByteArray::fromStdString(crafted.dump()));
        const CliRun m = runCli({QStringLiteral("merge"), QLatin1String(c.name), QStringLiteral("-o"),
                                 QStringLiteral("merged.json")},
                                dir);
        QVERIFY2(m.code == 1, m.err.constData());
        QVERIFY2(m.err.contains(c.expected), m.err.constData());
        QCOMPARE(readAll(other + QStringLiteral("/model.safetensors.index.json")), otherIndex);
        QVERIFY(!QFile::exists(dir + QStringLiteral("/merged.json")));
    }
    // Over a part: refused, the part intact.
    const QByteArray before = readAll(dir + QStringLiteral("/p0.json"));
    const CliRun self = runCli({QStringLiteral("merge"), QStringLiteral("p0.json"), QStringLiteral("-o"),
                                QStringLiteral("./p0.json")},
                               dir);
    QCOMPARE(self.code, 1);
    QVERIFY2(self.err.contains("would write over a part"), self.err.constData());
    QCOMPARE(readAll(dir + QStringLiteral("/p0.json")), before);
    // The run's own part merges, and merging it again replaces its own index.
    for (int i = 0; i < 2; ++i) {
        const CliRun ok = runCli({QStringLiteral("merge"), QStringLiteral("p0.json"), QStringLiteral("-o"),
                                  QStringLiteral("merged.json"), QStringLiteral("-q")},
                                 dir);
        QVERIFY2(ok.code == 0, ok.err.constData());
        QVERIFY(QFile::exists(dir + QStringLiteral("/out/q.safetensors.index.json")));
    }
}

void TestRunFiles::diffNeverWritesOverItsInputs() {
    const QString dir = m_dir.filePath(QStringLiteral("diff"));
    QDir().mkpath(dir);
    QVERIFY(QFile::copy(kModel, dir + QStringLiteral("/m.safetensors")));
    const QByteArray model = readAll(dir + QStringLiteral("/m.safetensors"));
    QVERIFY(QFile::link(QStringLiteral("m.safetensors"), dir + QStringLiteral("/m.json"))); // the model again
    const CliRun diff = runCli({QStringLiteral("diff"), QStringLiteral("m.safetensors"), kModel,
                                QStringLiteral("--report"), QStringLiteral("m.json")},
                               dir);
    QVERIFY2(diff.code != 0 && diff.err.contains("would write over model A"), diff.err.constData());
    QCOMPARE(readAll(dir + QStringLiteral("/m.safetensors")), model);
    // A model against itself, however spelled: refused, as the app refuses it (core/job/diff_job).
    QVERIFY(QFile::link(QStringLiteral("m.safetensors"), dir + QStringLiteral("/again.safetensors")));
    for (const QString& b : {QStringLiteral("m.safetensors"), QStringLiteral("./m.safetensors"),
                             QStringLiteral("again.safetensors")}) {
        const CliRun self = runCli({QStringLiteral("diff"), QStringLiteral("m.safetensors"), b}, dir);
        QVERIFY2(self.code == 1 && self.err.contains("is model A itself"), self.err.constData());
    }
}

QTEST_GUILESS_MAIN(TestRunFiles)
#include "tst_run_files.moc"
