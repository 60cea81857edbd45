#include "gui/session.h"

#include "base/error.h"
#include "base/whole_number.h"
#include "quant/spec_json.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace ql {

QByteArray Session::toJson() const {
    nlohmann::json j;
    j["quantlens_session"] = 1;
    j["file"] = file;
    j["tensor"] = tensor;
    j["spec"] = ql::toJson(spec);
    j["backend"] = backend;
    j["compare"] = {{"kind", compare.kind == CompareWith::Kind::Backend  ? "backend"
                             : compare.kind == CompareWith::Kind::Preset ? "preset"
                                                                         : "none"},
                    {"backend", compare.backend},
                    {"preset", std::string(nameOf(compare.preset))}};
    j["params"] = {{"scales", params.scales}, {"zero_points", params.zeroPoints}};
    j["geometry"] = geometry.toBase64().toStdString();
    j["state"] = state.toBase64().toStdString();
    j["page"] = page;
    const std::string text = j.dump(2);
    return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

Session Session::fromJson(const QByteArray& bytes) {
    const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("quantlens_session"))
        throw FileError("not a QuantLens session (expected a JSON object with \"quantlens_session\")");
    Session s;
    s.file = j.value("file", std::string());
    s.tensor = j.value("tensor", std::string());
    if (j.contains("spec")) s.spec = specFromJson(j["spec"]);
    s.backend = j.value("backend", std::string("cpu"));
    if (j.contains("compare") && j["compare"].is_object()) {
        const auto& c = j["compare"];
        const std::string kind = c.value("kind", std::string("none"));
        s.compare.kind = kind == "backend"  ? CompareWith::Kind::Backend
                         : kind == "preset" ? CompareWith::Kind::Preset
                                            : CompareWith::Kind::None;
        s.compare.backend = c.value("backend", std::string());
        s.compare.preset = presetFromName(c.value("preset", std::string("torch"))).value_or(Preset::Torch);
    }
    if (j.contains("params") && j["params"].is_object()) {
        s.params.scales = j["params"].value("scales", std::string());
        s.params.zeroPoints = j["params"].value("zero_points", std::string());
    }
    s.geometry = QByteArray::fromBase64(QByteArray::fromStdString(j.value("geometry", std::string())));
    s.state = QByteArray::fromBase64(QByteArray::fromStdString(j.value("state", std::string())));
    // A session is a file: a page of 1e30 or 2.5 opens the first page, never converts.
    s.page = j.contains("page") ? wholeNumber<int>(j["page"]).value_or(0) : 0;
    return s;
}

std::optional<Session> startupSession(const QByteArray& lastJson, const QString& file) {
    if (lastJson.isEmpty()) return std::nullopt;
    Session s;
    try {
        s = Session::fromJson(lastJson);
    } catch (const std::exception&) {
        return std::nullopt; // a session from an older build that no longer parses: start afresh
    }
    if (file.isEmpty()) return s;
    const std::string given = QFileInfo(file).absoluteFilePath().toStdString();
    if (given != s.file) s.tensor.clear();
    s.file = given;
    return s;
}

Session loadSession(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw FileError(path.toStdString() + ": " + f.errorString().toStdString());
    try {
        return Session::fromJson(f.readAll());
    } catch (const std::exception& e) {
        throw FileError(path.toStdString() + ": " + e.what());
    }
}

void saveSession(const QString& path, const Session& session) {
    // QSaveFile writes a temporary file and renames it: a failed save never truncates the old one.
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(session.toJson()) < 0 || !f.commit())
        throw FileError(path.toStdString() + ": " + f.errorString().toStdString());
}

} // namespace ql
