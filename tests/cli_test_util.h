#pragma once
// Running the quantlens-cli binary from a suite: its exit code and both output streams.
#include <QDir>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace qltest {

struct CliRun {
    int code = -1; // -1: it did not finish in time, or crashed
    QByteArray out;
    QByteArray err;
};

inline CliRun runCli(const QStringList& args, const QString& cwd, int timeoutMs = 300000) {
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.start(QStringLiteral(QUANTLENS_CLI), args);
    CliRun r;
    if (!p.waitForFinished(timeoutMs)) return r;
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

/// `quantize MODEL --all SPEC --out DIR/TAG/q.{h5,safetensors}` (`format`: "hdf5", "native" or the
/// safetensors default), in a folder of its own under `dir` named from the test's data tag: the run
/// and the path it exported to.
struct CliExport {
    CliRun run;
    QString out;
};
inline CliExport exportWholeModel(const QString& model, const QString& dir, const QString& tag,
                                  const QString& format, const QStringList& spec) {
    const QString folder = dir + QLatin1Char('/') + QString(tag).replace(QLatin1Char(' '), QLatin1Char('_'));
    CliExport e;
    if (!QDir().mkpath(folder)) return e;
    e.out = folder +
            (format == QLatin1String("hdf5") ? QStringLiteral("/q.h5") : QStringLiteral("/q.safetensors"));
    QStringList args = QStringList{QStringLiteral("quantize"), model, QStringLiteral("--all")} + spec;
    args << QStringLiteral("--out") << e.out;
    if (format == QLatin1String("native"))
        args << QStringLiteral("--export-layout") << QStringLiteral("native");
    e.run = runCli(args, dir);
    return e;
}

} // namespace qltest
