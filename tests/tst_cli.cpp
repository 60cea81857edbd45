// quantlens-cli as a user and a script see it: outputs against PyTorch, the comparison verdict,
// reports, help on every command, and one clear line with exit 1 or 2 for every mistake.
#include "cli_test_util.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "quant_test_util.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

using Run = qltest::CliRun;
using qltest::runCli;

int runPython(const QStringList& args, QByteArray* output = nullptr) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(QUANTLENS_PYTHON), args);
    if (!p.waitForFinished(180000)) return -1;
    if (output) *output = p.readAll();
    return p.exitCode();
}

QString script(const char* name) {
    return QStringLiteral(QUANTLENS_TEST_SCRIPTS "/") + QLatin1String(name);
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void compressedTensorsExportKeepsWhatItCannotStore();
    void matchesTorchPerChannel_data();
    void matchesTorchPerChannel();
    void compareNamesReciprocalVersusDivision();
    void compareBackendsSideBySide();
    void allPrintsSortedTableAndReport();
    void calibrationNoteIsShown();
    void randomOptionsNeverCrash();
    void sweepAndInspect();
    void helpOnEveryCommand_data();
    void helpOnEveryCommand();
    void mistakesGiveOneLine_data();
    void mistakesGiveOneLine();

private:
    QTemporaryDir m_dir;
    bool m_torch = false;
};

void TestCli::initTestCase() {
    QVERIFY(m_dir.isValid());
    QByteArray log;
    if (runPython({script("cli_fixtures.py"), m_dir.path()}, &log) != 0)
        QSKIP(qPrintable(QStringLiteral("cannot write fixtures (python3 with NumPy needed): ") +
                         QString::fromUtf8(log)));
    m_torch = runPython({QStringLiteral("-c"), QStringLiteral("import torch")}) == 0;
}

void TestCli::matchesTorchPerChannel_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("torchDtype");
    QTest::addColumn<QString>("axis");
    QTest::addColumn<QString>("scale");
    QTest::addColumn<QString>("zp");
    QTest::addRow("qint8/axis0") << "int8"
                                 << "qint8"
                                 << "0"
                                 << "scale"
                                 << "zp";
    QTest::addRow("quint8/axis0") << "uint8"
                                  << "quint8"
                                  << "0"
                                  << "scale"
                                  << "zpu";
    QTest::addRow("qint8/axis1") << "int8"
                                 << "qint8"
                                 << "1"
                                 << "scale1"
                                 << "zp1";
}

void TestCli::matchesTorchPerChannel() {
    QFETCH(QString, dtype);
    QFETCH(QString, torchDtype);
    QFETCH(QString, axis);
    QFETCH(QString, scale);
    QFETCH(QString, zp);
    if (!m_torch) QSKIP("python3-torch not installed");
    const QString out =
        m_dir.filePath(QStringLiteral("torch_") + torchDtype + axis + QStringLiteral(".safetensors"));
    const Run r = runCli(
        {QStringLiteral("quantize"), QStringLiteral("random.safetensors"), QStringLiteral("--tensor"),
         QStringLiteral("w"), QStringLiteral("--preset"), QStringLiteral("torch"), QStringLiteral("--dtype"),
         dtype, QStringLiteral("--asymmetric"), QStringLiteral("--axis"), axis, QStringLiteral("--scale"),
         QStringLiteral("random.safetensors:") + scale, QStringLiteral("--zero-point"),
         QStringLiteral("random.safetensors:") + zp, QStringLiteral("--out"), out,
         QStringLiteral("--export-layout"), QStringLiteral("native")}, // the operator's own codes
        m_dir.path());
    QVERIFY2(r.code == 0, r.err.constData());
    QByteArray log;
    const int rc =
        runPython({script("cli_torch_check.py"), m_dir.filePath(QStringLiteral("random.safetensors")), out,
                   QStringLiteral("w"), scale, zp, axis, torchDtype},
                  &log);
    QVERIFY2(rc == 0, log.constData());
}

void TestCli::compareNamesReciprocalVersusDivision() {
    const Run r = runCli(
        {QStringLiteral("compare"), QStringLiteral("tie.safetensors"), QStringLiteral("--tensor"),
         QStringLiteral("x"), QStringLiteral("--preset"), QStringLiteral("torch"), QStringLiteral("--dtype"),
         QStringLiteral("uint8"), QStringLiteral("--scheme"), QStringLiteral("per-tensor"),
         QStringLiteral("--scale"), QStringLiteral("tie.safetensors:scale"), QStringLiteral("--zero-point"),
         QStringLiteral("tie.safetensors:zp"), QStringLiteral("--preset-b"), QStringLiteral("aclnn-quantize"),
         QStringLiteral("--report"), QStringLiteral("cmp.json")},
        m_dir.path());
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.out.contains("mismatched codes: 1 of 4"), r.out.constData());
    // As a check: the same comparison fails with --fail-on-mismatch; two backends that agree pass it.
    QStringList args{QStringLiteral("compare"),           QStringLiteral("tie.safetensors"),
                     QStringLiteral("--tensor"),          QStringLiteral("x"),
                     QStringLiteral("--preset"),          QStringLiteral("torch"),
                     QStringLiteral("--dtype"),           QStringLiteral("uint8"),
                     QStringLiteral("--scheme"),          QStringLiteral("per-tensor"),
                     QStringLiteral("--scale"),           QStringLiteral("tie.safetensors:scale"),
                     QStringLiteral("--zero-point"),      QStringLiteral("tie.safetensors:zp"),
                     QStringLiteral("--fail-on-mismatch")};
    QCOMPARE(runCli(args + QStringList{QStringLiteral("--preset-b"), QStringLiteral("aclnn-quantize")},
                    m_dir.path())
                 .code,
             1);
    QCOMPARE(runCli(args + QStringList{QStringLiteral("--backend-b"), QStringLiteral("cpu-reference")},
                    m_dir.path())
                 .code,
             0);
    QVERIFY2(r.out.contains("A 128, B 127"), r.out.constData());
    QVERIFY2(r.out.contains("reciprocal") && r.out.contains("division"), r.out.constData());
    QVERIFY2(r.out.contains("timing (median of 1 run, ms)") && r.out.contains("  A torch ") &&
                 r.out.contains("  B aclnn-quantize "),
             r.out.constData());
    QFile f(m_dir.filePath(QStringLiteral("cmp.json")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject c =
        QJsonDocument::fromJson(f.readAll()).object()[QLatin1String("comparison")].toObject();
    const QJsonObject e = c[QLatin1String("examples")].toArray().first().toObject();
    QCOMPARE(e[QLatin1String("code_a")].toInt(), 128);
    QCOMPARE(e[QLatin1String("code_b")].toInt(), 127);
    QCOMPARE(c[QLatin1String("causes")].toArray().first().toObject()[QLatin1String("name")].toString(),
             QStringLiteral("scale-op"));
}

// The same spec on two backends: both error rows, the code comparison, the statistics' agreement
// and each side's phases.
void TestCli::compareBackendsSideBySide() {
    const Run r =
        runCli({QStringLiteral("compare"), QStringLiteral("random.safetensors"), QStringLiteral("--tensor"),
                QStringLiteral("w"), QStringLiteral("--backend"), QStringLiteral("cpu"),
                QStringLiteral("--backend-b"), QStringLiteral("cpu-reference"), QStringLiteral("--repeat"),
                QStringLiteral("3"), QStringLiteral("-q")},
               m_dir.path());
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.out.contains("A cpu ") && r.out.contains("B cpu-reference "), r.out.constData());
    QVERIFY2(r.out.contains("timing (median of 3 runs, ms)"), r.out.constData());
    QVERIFY2(r.out.contains("mismatched codes: 0 of"), r.out.constData());
    QVERIFY2(r.out.contains("statistics: equal (counts and histograms exactly, sums within 1e-10 relative)"),
             r.out.constData());
    const Run bad =
        runCli({QStringLiteral("compare"), QStringLiteral("random.safetensors"), QStringLiteral("--tensor"),
                QStringLiteral("w"), QStringLiteral("--backend-b"), QStringLiteral("no-such-device")},
               m_dir.path());
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("unknown backend 'no-such-device'"), bad.err.constData());
}

// The option parser fuzzed from a grammar: random flags with hostile values (huge, negative, empty,
// malformed, non-ASCII). Every run ends with exit 0, 1 or 2 — never a signal — and an error is one
// line. A fixed seed: the same 300 command lines on every machine.
void TestCli::randomOptionsNeverCrash() {
    const QStringList flags{
        QStringLiteral("--preset"),     QStringLiteral("--scheme"),       QStringLiteral("--axis"),
        QStringLiteral("--group-size"), QStringLiteral("--block"),        QStringLiteral("--dtype"),
        QStringLiteral("--calib"),      QStringLiteral("--round"),        QStringLiteral("--scale"),
        QStringLiteral("--zero-point"), QStringLiteral("--repeat"),       QStringLiteral("--match"),
        QStringLiteral("--asymmetric"), QStringLiteral("--narrow-range"), QStringLiteral("--sqrt-mode")};
    const QStringList values{QStringLiteral("0"),
                             QStringLiteral("-1"),
                             QStringLiteral("9223372036854775807"),
                             QStringLiteral("-9223372036854775808"),
                             QStringLiteral("4294967296"),
                             QStringLiteral(""),
                             QStringLiteral("1,0"),
                             QStringLiteral("1,,2"),
                             QStringLiteral("tensorrt"),
                             QStringLiteral("MX"),
                             QStringLiteral("nvfp4"),
                             QStringLiteral("block"),
                             QStringLiteral("per-group"),
                             QStringLiteral("ragged"),
                             QStringLiteral("int4"),
                             QStringLiteral("fp4-e2m1"),
                             QStringLiteral("percentile=1e999"),
                             QStringLiteral("entropy"),
                             QStringLiteral("mse"),
                             QStringLiteral("random.safetensors"),
                             QStringLiteral("random.safetensors:w"),
                             QStringLiteral("(((("),
                             QStringLiteral("\u00e9\u4e2d"),
                             QString(300, QLatin1Char('9'))};
    const QStringList commands{QStringLiteral("quantize"), QStringLiteral("compare"),
                               QStringLiteral("sweep")};
    std::uint32_t x = 20261122u;
    auto next = [&](int n) {
        x = x * 1664525u + 1013904223u;
        return static_cast<int>((x >> 8) % static_cast<std::uint32_t>(n));
    };
    for (int run = 0; run < 300; ++run) {
        QStringList args{commands[next(3)], QStringLiteral("random.safetensors"), QStringLiteral("-q")};
        if (args[0] == QLatin1String("quantize"))
            args << QStringLiteral("--tensor") << QStringLiteral("w");
        else
            args << QStringLiteral("--tensor") << QStringLiteral("w")
                 << (args[0] == QLatin1String("sweep") ? QStringLiteral("--group-size")
                                                       : QStringLiteral("--preset-b"))
                 << (args[0] == QLatin1String("sweep") ? QStringLiteral("4,8,3")
                                                       : QStringLiteral("aclnn-quantize"));
        for (int k = next(5); k >= 0; --k) {
            const QString& flag = flags[next(static_cast<int>(flags.size()))];
            args << flag;
            if (!flag.startsWith(QLatin1String("--asym")) && !flag.startsWith(QLatin1String("--narrow")) &&
                !flag.startsWith(QLatin1String("--sqrt")))
                args << values[next(static_cast<int>(values.size()))];
        }
        const Run r = runCli(args, m_dir.path());
        QVERIFY2(r.code >= 0 && r.code <= 2,
                 qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(" -> ") + QString::number(r.code)));
        if (r.code != 0)
            QVERIFY2(r.err.trimmed().startsWith("quantlens-cli: error: "),
                     qPrintable(args.join(QLatin1Char(' '))));
    }
}

// A calibration far from absmax (entropy on 128 values) is said on stderr and in the report.
void TestCli::calibrationNoteIsShown() {
    const Run r = runCli({QStringLiteral("quantize"), QStringLiteral("random.safetensors"),
                          QStringLiteral("--tensor"), QStringLiteral("w"), QStringLiteral("--calib"),
                          QStringLiteral("entropy"), QStringLiteral("--report"), QStringLiteral("note.json")},
                         m_dir.path());
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.err.contains("quantlens-cli: note: random.safetensors: tensor 'w': entropy"),
             r.err.constData());
    QFile f(m_dir.filePath(QStringLiteral("note.json")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject w =
        QJsonDocument::fromJson(f.readAll()).object()[QLatin1String("tensors")].toArray()[0].toObject();
    QVERIFY(w[QLatin1String("calibration_note")].toString().contains(QLatin1String("absmax")));
}

void TestCli::allPrintsSortedTableAndReport() {
    const Run r = runCli({QStringLiteral("quantize"), QStringLiteral("random.safetensors"),
                          QStringLiteral("--all"), QStringLiteral("--report"), QStringLiteral("all.json"),
                          QStringLiteral("--repeat"), QStringLiteral("3")},
                         m_dir.path());
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.err.isEmpty()); // not a terminal: no progress noise
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QVERIFY(lines.first().startsWith("tensor"));
    QVERIFY(lines[1].startsWith("w ")); // the only lossy tensor is the worst
    QFile f(m_dir.filePath(QStringLiteral("all.json")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(j[QLatin1String("file")].toString(), QStringLiteral("random.safetensors"));
    const QJsonArray tensors = j[QLatin1String("tensors")].toArray();
    QCOMPARE(tensors.size(), 8); // every tensor: the four I64 ones and the three f32 vectors (no weights:
                                 // scale, scale1, b) are listed as passed through
    int passed = 0;
    for (const auto& t : tensors)
        passed += t.toObject().contains(QLatin1String("passed_through"));
    QCOMPARE(passed, 7);
    const QJsonObject w = tensors.first().toObject();
    QCOMPARE(w[QLatin1String("name")].toString(), QStringLiteral("w"));
    QCOMPARE(w[QLatin1String("timing")].toObject()[QLatin1String("runs")].toInt(), 3);
    QVERIFY(w[QLatin1String("stats")].toObject()[QLatin1String("sqnr_db")].toDouble() > 30);
    // CSV: one row per tensor.
    const Run csv =
        runCli({QStringLiteral("quantize"), QStringLiteral("random.safetensors"), QStringLiteral("--match"),
                QStringLiteral("^(w|b)$"), QStringLiteral("--report"), QStringLiteral("all.csv")},
               m_dir.path());
    QCOMPARE(csv.code, 0);
    QFile c(m_dir.filePath(QStringLiteral("all.csv")));
    QVERIFY(c.open(QIODevice::ReadOnly));
    QCOMPARE(c.readAll().trimmed().split('\n').size(), 3);
}

void TestCli::sweepAndInspect() {
    const Run s = runCli({QStringLiteral("sweep"), QStringLiteral("random.safetensors"),
                          QStringLiteral("--tensor"), QStringLiteral("w"), QStringLiteral("--preset"),
                          QStringLiteral("tensorrt"), QStringLiteral("--group-size"),
                          QStringLiteral("4,8,16"), QStringLiteral("--report"), QStringLiteral("sweep.json")},
                         m_dir.path());
    QVERIFY2(s.code == 0, s.err.constData());
    QVERIFY(s.out.contains("group 4") && s.out.contains("group 8") && s.out.contains("group 16"));
    // A size given twice runs once; a list past what a sweep keeps is refused up front.
    const Run twice =
        runCli({QStringLiteral("sweep"), QStringLiteral("random.safetensors"), QStringLiteral("--tensor"),
                QStringLiteral("w"), QStringLiteral("--preset"), QStringLiteral("tensorrt"),
                QStringLiteral("--group-size"), QStringLiteral("8,8,8")},
               m_dir.path());
    QVERIFY2(twice.code == 0, twice.err.constData());
    QCOMPARE(twice.out.count("group 8"), 1);
    QStringList many;
    for (int g = 1; g <= 65; ++g)
        many << QString::number(g);
    const Run tooMany =
        runCli({QStringLiteral("sweep"), QStringLiteral("random.safetensors"), QStringLiteral("--tensor"),
                QStringLiteral("w"), QStringLiteral("--group-size"), many.join(QLatin1Char(','))},
               m_dir.path());
    QCOMPARE(tooMany.code, 2);
    QVERIFY2(tooMany.err.contains("at most 64 sizes"), tooMany.err.constData());
    const Run i =
        runCli({QStringLiteral("inspect"), QStringLiteral("random.safetensors"), QStringLiteral("--json")},
               m_dir.path());
    QCOMPARE(i.code, 0);
    const QJsonArray t = QJsonDocument::fromJson(i.out).object()[QLatin1String("tensors")].toArray();
    QCOMPARE(t.size(), 8);
    QCOMPARE(t.first().toObject()[QLatin1String("shape")].toArray().size(), 2);
    const Run b = runCli({QStringLiteral("backends")}, m_dir.path());
    QCOMPARE(b.code, 0);
    QVERIFY(b.out.contains("cpu-reference"));
}

void TestCli::helpOnEveryCommand_data() {
    QTest::addColumn<QString>("command");
    for (const char* c :
         {"", "inspect", "quantize", "compare", "sweep", "merge", "check", "diff", "backends"})
        QTest::addRow("%s", *c ? c : "top") << c;
}

void TestCli::helpOnEveryCommand() {
    QFETCH(QString, command);
    QStringList args;
    if (!command.isEmpty()) args << command;
    const Run r = runCli(args << QStringLiteral("--help"), m_dir.path());
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("Usage"));
    if (command == QLatin1String("quantize"))
        QVERIFY(r.out.contains("--preset") && r.out.contains("--zero-point"));
}

void TestCli::mistakesGiveOneLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mentions");
    const QString f = QStringLiteral("random.safetensors");
    const QStringList w{QStringLiteral("quantize"), f, QStringLiteral("--tensor"), QStringLiteral("w")};
    QTest::addRow("no-command") << QStringList{} << 2 << "";
    QTest::addRow("command-typo") << QStringList{QStringLiteral("quantise"), f, QStringLiteral("--all")} << 2
                                  << "did you mean 'quantize'";
    QTest::addRow("hdf5-style-leading-slash")
        << QStringList{QStringLiteral("quantize"), f, QStringLiteral("--tensor"), QStringLiteral("/nope")}
        << 1 << "nope";
    QTest::addRow("unknown-flag") << (w + QStringList{QStringLiteral("--bogus")}) << 2 << "--bogus";
    // A whole-model run the spec applies to nowhere is a mistake in the spec, not a pass-through.
    QTest::addRow("spec-applies-to-none")
        << QStringList{QStringLiteral("quantize"), f, QStringLiteral("--all"), QStringLiteral("--dtype"),
                       QStringLiteral("int4")}
        << 1 << "no tensor was quantized";
    QTest::addRow("no-tensor-choice") << QStringList{QStringLiteral("quantize"), f} << 2 << "--all";
    QTest::addRow("missing-tensor") << QStringList{QStringLiteral("quantize"), f, QStringLiteral("--tensor"),
                                                   QStringLiteral("nope")}
                                    << 1 << "nope";
    QTest::addRow("integer-tensor-named")
        << QStringList{QStringLiteral("quantize"), f, QStringLiteral("--tensor"), QStringLiteral("ids")} << 1
        << "not a floating-point tensor";
    QTest::addRow("missing-file") << QStringList{QStringLiteral("quantize"),
                                                 QStringLiteral("gone.safetensors"), QStringLiteral("--all")}
                                  << 1 << "gone.safetensors";
    QTest::addRow("bad-dtype") << (w + QStringList{QStringLiteral("--dtype"), QStringLiteral("int7")}) << 2
                               << "int7";
    QTest::addRow("bad-preset") << (w + QStringList{QStringLiteral("--preset"), QStringLiteral("onnx")}) << 2
                                << "onnx";
    QTest::addRow("axis-out-of-range") << (w + QStringList{QStringLiteral("--axis"), QStringLiteral("5")})
                                       << 2 << "--axis: axis 5 is out of range";
    QTest::addRow("zero-point-with-symmetric")
        << (w + QStringList{QStringLiteral("--symmetric"), QStringLiteral("--scale"),
                            f + QStringLiteral(":scale"), QStringLiteral("--zero-point"),
                            f + QStringLiteral(":zp")})
        << 2 << "--symmetric";
    QTest::addRow("scale-count") << (w + QStringList{QStringLiteral("--scale"), f + QStringLiteral(":b")})
                                 << 1 << "scales";
    QTest::addRow("scale-tensor-missing")
        << (w + QStringList{QStringLiteral("--scale"), f + QStringLiteral(":nah")}) << 1 << "nah";
    QTest::addRow("scale-not-file-colon-tensor")
        << (w + QStringList{QStringLiteral("--scale"), QStringLiteral("0.5")}) << 2 << "FILE:TENSOR";
    QTest::addRow("group-size-not-dividing-trt")
        << (w + QStringList{QStringLiteral("--preset"), QStringLiteral("tensorrt"),
                            QStringLiteral("--scheme"), QStringLiteral("block"), QStringLiteral("--block"),
                            QStringLiteral("3")})
        << 1 << "'w'";
    QTest::addRow("block-zero") << (w + QStringList{QStringLiteral("--preset"), QStringLiteral("tensorrt"),
                                                    QStringLiteral("--scheme"), QStringLiteral("block"),
                                                    QStringLiteral("--block"), QStringLiteral("0")})
                                << 2 << "--block";
    QTest::addRow("axis-beyond-int") << (w +
                                         QStringList{QStringLiteral("--axis"), QStringLiteral("4294967296")})
                                     << 2 << "--axis 4294967296";
    QTest::addRow("mx-not-blocks") << (w + QStringList{QStringLiteral("--preset"), QStringLiteral("mx"),
                                                       QStringLiteral("--scheme"),
                                                       QStringLiteral("per-tensor")})
                                   << 1 << "block scheme";
    // An option of another scheme's groups is refused, not ignored (it quantized per tensor).
    QTest::addRow("block-with-per-tensor")
        << (w + QStringList{QStringLiteral("--scheme"), QStringLiteral("per-tensor"),
                            QStringLiteral("--block"), QStringLiteral("32")})
        << 2 << "--block sets the groups of --scheme block; with --scheme per-tensor";
    QTest::addRow("group-size-with-nvfp4")
        << (w + QStringList{QStringLiteral("--preset"), QStringLiteral("nvfp4"),
                            QStringLiteral("--group-size"), QStringLiteral("64")})
        << 2 << "with nvfp4 blocks";
    QTest::addRow("group-index-with-block")
        << (w + QStringList{QStringLiteral("--block"), QStringLiteral("4"), QStringLiteral("--group-index"),
                            f + QStringLiteral(":ends")})
        << 2 << "--block sets the groups of --scheme block; with --scheme ragged";
    QTest::addRow("sweep-with-block") << QStringList{QStringLiteral("sweep"),        f,
                                                     QStringLiteral("--tensor"),     QStringLiteral("w"),
                                                     QStringLiteral("--group-size"), QStringLiteral("32"),
                                                     QStringLiteral("--block"),      QStringLiteral("64")}
                                      << 2 << "--block fixes the groups";
    QTest::addRow("sweep-with-group-index")
        << QStringList{QStringLiteral("sweep"),         f,
                       QStringLiteral("--tensor"),      QStringLiteral("w"),
                       QStringLiteral("--group-size"),  QStringLiteral("32"),
                       QStringLiteral("--group-index"), f + QStringLiteral(":ends")}
        << 2 << "--group-index fixes the groups";
    QTest::addRow("axis-with-per-tensor")
        << (w + QStringList{QStringLiteral("--scheme"), QStringLiteral("per-tensor"),
                            QStringLiteral("--axis"), QStringLiteral("1")})
        << 2 << "per-tensor has one scale";
    QTest::addRow("preset-typo") << (w + QStringList{QStringLiteral("--preset"), QStringLiteral("tensort")})
                                 << 2 << "did you mean 'tensorrt'";
    QTest::addRow("bad-report-extension")
        << (w + QStringList{QStringLiteral("--report"), QStringLiteral("r.txt")}) << 2 << "r.txt";
    QTest::addRow("bad-out-extension")
        << (w + QStringList{QStringLiteral("--out"), QStringLiteral("o.bin")}) << 2 << "o.bin";
    QTest::addRow("unknown-backend") << (w + QStringList{QStringLiteral("--backend"), QStringLiteral("tpu")})
                                     << 2 << "tpu";
    QTest::addRow("compare-needs-b") << QStringList{QStringLiteral("compare"), f, QStringLiteral("--tensor"),
                                                    QStringLiteral("w")}
                                     << 2 << "--preset-b";
    QTest::addRow("sweep-bad-sizes") << QStringList{QStringLiteral("sweep"),        f,
                                                    QStringLiteral("--tensor"),     QStringLiteral("w"),
                                                    QStringLiteral("--group-size"), QStringLiteral("32,x")}
                                     << 2 << "32,x";
    // An empty value (a shell variable left unset) is a mistake, not "no export".
    QTest::addRow("empty-out") << (w + QStringList{QStringLiteral("--out"), QString()}) << 2
                               << "--out: empty";
    QTest::addRow("empty-file") << QStringList{QStringLiteral("quantize"), QString(), QStringLiteral("--all")}
                                << 2 << "FILE: empty";
    QTest::addRow("empty-report-on-check")
        << QStringList{QStringLiteral("check"),   QStringLiteral("r.json"),
                       QStringLiteral("--junit"), QString(),
                       QStringLiteral("--rule"),  QStringLiteral("sqnr_db > 1")}
        << 2 << "--junit: empty";
    QTest::addRow("calib-unknown") << (w + QStringList{QStringLiteral("--calib"), QStringLiteral("magic")})
                                   << 2 << "magic";
}

void TestCli::mistakesGiveOneLine() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, mentions);
    const Run r = runCli(args, m_dir.path());
    QVERIFY2(r.code == code, r.err.constData());
    const QByteArray err = r.err.trimmed();
    QVERIFY2(!err.isEmpty() && !err.contains('\n'), r.err.constData());
    QVERIFY2(err.startsWith("quantlens-cli: error: "), err.constData());
    QVERIFY2(err.contains(mentions.toUtf8()), err.constData());
}

// A whole-model export in the compressed-tensors layout: the quantized tensors that layout cannot
// store (a 1-D norm) are kept as they are, and the report says so, as for tensors the spec does not
// apply to.
void TestCli::compressedTensorsExportKeepsWhatItCannotStore() {
    const std::string model = m_dir.filePath(QStringLiteral("ct/model.safetensors")).toStdString();
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("ct/out"))));
    ql::writeSafetensors(
        model,
        {{"model.layers.0.mlp.up_proj.weight", ql::Tensor::fromFloats({8, 16}, qltest::normalValues(128, 1))},
         {"model.norm.weight", ql::Tensor::fromFloats({16}, qltest::normalValues(16, 2))},
         {"odd_name", ql::Tensor::fromFloats({4, 16}, qltest::normalValues(64, 3))}});
    // (--include-non-weights: the norm reaches the export, which cannot store it)
    const Run r =
        runCli({QStringLiteral("quantize"), QString::fromStdString(model), QStringLiteral("--all"),
                QStringLiteral("--include-non-weights"), QStringLiteral("-q"), QStringLiteral("--preset"),
                QStringLiteral("tensorrt"), QStringLiteral("--report"), QStringLiteral("r.json"),
                QStringLiteral("--out"), QStringLiteral("out/model.safetensors")},
               m_dir.filePath(QStringLiteral("ct")));
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(
        r.out.contains("model.norm.weight  kept unquantized: tensorrt int8: no compressed-tensors layout"),
        r.out.constData());
    // A name that is not a module's weight is quantized and stored as one (<name>.weight), the mapping
    // recorded in the export's metadata, so diff and the readers find the original name again.
    QVERIFY2(!r.out.contains("odd_name  kept unquantized"), r.out.constData());
    const auto out =
        ql::openTensorSource(m_dir.filePath(QStringLiteral("ct/out/model.safetensors")).toStdString());
    QVERIFY(out->find("model.layers.0.mlp.up_proj.weight_scale"));
    const ql::TensorInfo* norm = out->find("model.norm.weight");
    QVERIFY(norm && norm->dtype == ql::DType::F32); // kept byte for byte
    QCOMPARE(out->load("model.norm.weight").toFloatVector(), qltest::normalValues(16, 2));
    QVERIFY(out->find("odd_name.weight") && out->find("odd_name.weight_scale"));
    QVERIFY(!out->find("odd_name"));
    QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("ct/out/config.json"))));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
