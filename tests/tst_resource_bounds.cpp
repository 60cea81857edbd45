// Small files whose metadata claims big costs: a long key over many strings, many
// tiny tensors, a long node name over many initializers, many Constant nodes, a gzip bomb, a deep
// config.json, a shard count of 2^40. Each runs quantlens-cli as users run it, under an address-space
// limit and a wall-clock limit, and must end inside them with its exit code and its message naming
// the file. Before the bounds each took 25 s to minutes, or gigabytes and then "out of memory".
#include "cli_test_util.h"
#include "io_test_util.h"
#include "quantlens/config.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace qltest;

namespace {

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer reserves terabytes of shadow memory and runs several times slower: there the cases
// must still end with their code and message, but time and memory are not measured.
constexpr bool kMeasured = false;
#else
constexpr bool kMeasured = true;
#endif
constexpr rlim_t kAddressSpace = 2ULL << 30; // the child's whole address space, mappings included
constexpr long kMaxPeakKb = 1L << 20;        // resident at its peak
// Each case took 24 s or more before its bound, and takes 6 s at most now on two busy cores.
constexpr double kMaxSeconds = 15;
constexpr int kKillAfterMs = kMeasured ? 60000 : 600000;

struct Bounded {
    int code = -1; // -1: killed (the time limit) or crashed
    bool timedOut = false;
    double seconds = 0;
    long peakKb = 0;
    QByteArray out, err;
};

// Runs quantlens-cli in `cwd` with its output in files (a case that goes wrong may print a gigabyte),
// under the limits; waits at most kKillAfterMs.
Bounded runBounded(const QStringList& args, const QString& cwd) {
    const std::string outPath = QString(cwd + QStringLiteral("/cli.out")).toStdString();
    const std::string errPath = QString(cwd + QStringLiteral("/cli.err")).toStdString();
    std::vector<std::string> argv{"quantlens-cli"};
    for (const QString& a : args)
        argv.push_back(a.toStdString());
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const std::string dir = cwd.toStdString();
    QElapsedTimer timer;
    timer.start();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0 || ::chdir(dir.c_str()) != 0) ::_exit(126);
        ::dup2(out, 1);
        ::dup2(err, 2);
        const rlimit files{256u << 20, 256u << 20}; // no case writes more
        ::setrlimit(RLIMIT_FSIZE, &files);
        if (kMeasured) {
            const rlimit space{kAddressSpace, kAddressSpace};
            ::setrlimit(RLIMIT_AS, &space);
            ::setenv("MALLOC_ARENA_MAX", "2", 1); // thread arenas reserve 64 MiB of address space each
        }
        ::execv(QUANTLENS_CLI, cargv.data());
        ::_exit(127);
    }
    Bounded r;
    int status = 0;
    rusage usage{};
    for (;;) {
        const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
        if (done == pid) break;
        if (timer.elapsed() > kKillAfterMs) {
            ::kill(pid, SIGKILL);
            ::wait4(pid, &status, 0, &usage);
            r.timedOut = true;
            break;
        }
        ::usleep(20000);
    }
    r.seconds = static_cast<double>(timer.elapsed()) / 1000.0;
    r.peakKb = usage.ru_maxrss;
    if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
    QFile out(QString::fromStdString(outPath)), err(QString::fromStdString(errPath));
    if (out.open(QIODevice::ReadOnly)) r.out = out.read(1 << 20);
    if (err.open(QIODevice::ReadOnly)) r.err = err.read(1 << 20);
    return r;
}

} // namespace

class TestResourceBounds : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_made; // the fixture cases written so far, each once

    // The files of one case of tests/scripts/bounds_fixtures.py, written into the suite's folder;
    // why not, when they could not be.
    QString makeFixture(const QString& fixture) {
        const QString tag = QLatin1Char('|') + fixture + QLatin1Char('|');
        if (m_made.contains(tag)) return {};
        QString error;
        runPython({pythonScript("bounds_fixtures.py"), fixture, m_dir.path()}, &error);
        if (error.isEmpty()) m_made += tag;
        return error;
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void smallFileBigCost_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("modules"); // what python3 needs to write it
        QTest::addColumn<bool>("built");      // whether this build reads the format
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("expected"); // in stdout or stderr
        const auto list = [](const char* text) { return QString::fromUtf8(text).split(QLatin1Char(' ')); };
        const bool onnx = QUANTLENS_HAVE_ONNX, hdf5 = QUANTLENS_HAVE_HDF5;
        // The key was copied per element: 40,000 copies of 256 KiB.
        QTest::addRow("gguf/long-key-over-40k-strings")
            << "gguf-long-key" << QString() << true << list("inspect long_key.gguf") << 0
            << "0 tensors, 0 bytes";
        // A linear name lookup per tensor: 200,000 squared string compares.
        QTest::addRow("gguf/quantize-all-200k-empty-tensors")
            << "gguf-empty-tensors" << QString() << true
            << list("quantize empty_tensors.gguf --all -q --preset torch --dtype int8") << 1
            << "empty_tensors.gguf: no tensor was quantized (the spec applies to none of the 200000 selected";
        QTest::addRow("safetensors/diff-60k-tensors")
            << "safetensors-many" << QString() << true
            << list("diff many_a.safetensors many_b.safetensors -q") << 0 << "60000 pairs";
        // Subgraph names repeat the If node's 1 MB name: 1.5 GB of names, kept three times.
        QTest::addRow("onnx/if-with-1mb-name-1500-initializers")
            << "onnx-long-if"
            << "onnx" << onnx << list("inspect long_if_1500.onnx") << 1
            << "long_if_1500.onnx: listing its tensors would take more than 260 MiB of memory";
        QTest::addRow("onnx/inspect-if-with-1mb-name-1000-initializers")
            << "onnx-long-if"
            << "onnx" << onnx << list("inspect long_if_1000.onnx") << 1
            << "long_if_1000.onnx: listing its tensors would take more than 260 MiB of memory";
        // 2.4M nodes of 45 bytes: 1.5 GB of parsed messages before the tensor list began.
        QTest::addRow("onnx/2.4m-constant-nodes")
            << "onnx-constants" << QString() << onnx << list("inspect constants.onnx") << 1
            << "constants.onnx: parsing it would take more than 667 MiB of memory for its 108000014 bytes";
        // 4 GiB of zeros in 4 MB of gzip chunks: the probe read them all.
        QTest::addRow("hdf5/gzip-bomb")
            << "hdf5-gzip-bomb"
            << "h5py" << hdf5 << list("inspect gzip_bomb.h5") << 0
            << "not listed: bomb: its 4294967296 bytes would be decompressed from "
               "4176896 stored";
        QTest::addRow("config/2mb-nested-config.json")
            << "deep-config" << QString() << true
            << list("quantize deep_config/model.safetensors --all -q --preset torch --dtype int8 --out "
                    "q.safetensors")
            << 1 << "deep_config/config.json: JSON nests deeper than 32 levels";
        QTest::addRow("merge/part-claiming-2^40-shards")
            << "merge-huge-count" << QString() << true << list("merge part_huge.json -o merged.json") << 1
            << "shards 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, ... "
               "(1099511627775 in all) of 1099511627776 missing (not given, or the task has not finished; "
               "the "
               "count is part_huge.json's)";
    }

    void smallFileBigCost() {
#ifndef QUANTLENS_CLI
        QSKIP("built without quantlens-cli");
#else
        QFETCH(QString, fixture);
        QFETCH(QString, modules);
        QFETCH(bool, built);
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, expected);
        if (!built) QSKIP("this build does not read the format");
        if (!modules.isEmpty() && !pythonHas(modules))
            QSKIP(qPrintable(QStringLiteral("python3 with ") + modules + QStringLiteral(" writes the file")));
        if (const QString error = makeFixture(fixture); !error.isEmpty()) QFAIL(qPrintable(error));
        const Bounded r = runBounded(args, m_dir.path());
        qInfo("%s: exit %d in %.2f s, peak %ld MB", qPrintable(args.join(QLatin1Char(' ')).left(80)), r.code,
              r.seconds, r.peakKb >> 10);
        const QByteArray said = r.out + r.err;
        QVERIFY2(!r.timedOut, "killed at the time limit");
        QVERIFY2(said.contains(expected.toUtf8()), said.left(2000).constData());
        QCOMPARE(r.code, code);
        if (!kMeasured) return;
        QVERIFY2(r.seconds < kMaxSeconds, qPrintable(QStringLiteral("took %1 s").arg(r.seconds)));
        QVERIFY2(r.peakKb < kMaxPeakKb, qPrintable(QStringLiteral("peak %1 MB").arg(r.peakKb >> 10)));
#endif
    }
};

QTEST_GUILESS_MAIN(TestResourceBounds)
#include "tst_resource_bounds.moc"
