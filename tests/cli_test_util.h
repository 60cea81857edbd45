#pragma once
// Running the quantlens-cli binary from a suite: its exit code and both output streams.
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

} // namespace qltest
