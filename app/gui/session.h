#pragma once
// A saved session: the file, the tensor, the spec, its scale files, the backends and the window
// layout, as JSON
// (so it can be shared, and read back by a newer version with defaults for what it lacks).
#include "job/job.h"
#include "quant/spec.h"

#include <QByteArray>
#include <QString>
#include <optional>
#include <string>

namespace ql {

struct Session {
    std::string file;
    std::string tensor;
    QuantSpec spec;
    std::string backend = "cpu";
    CompareWith compare;
    ParamFiles params;   // calibration "file": where the scales (and zero points) come from
    QByteArray geometry; // QMainWindow::saveGeometry
    QByteArray state;    // QMainWindow::saveState (docks)
    int page = 0;

    QByteArray toJson() const;
    /// Throws QuantError (bad spec) or FileError (not a session) with the reason.
    static Session fromJson(const QByteArray& json);
};

/// The session the app starts with: the last one (`lastJson`, as the app saved it on closing) with
/// its folder, window, docks and spec, opening `file` instead of the last file when one is given (its
/// tensor then chosen afresh). Nothing when there is no readable last session.
std::optional<Session> startupSession(const QByteArray& lastJson, const QString& file);

/// Reads / writes a session file; throw FileError naming the path.
Session loadSession(const QString& path);
void saveSession(const QString& path, const Session& session);

} // namespace ql
