#include "job/run_notes.h"

#include "io/printable.h"

#include <map>

namespace ql {

std::vector<RunNote> importanceNotes(const std::vector<TensorReport>& reports) {
    std::map<std::string, std::vector<std::string>> byReason;
    for (const auto& r : reports)
        if (r.quantized() && !r.weighted && !r.importanceNote.empty())
            byReason[r.importanceNote].push_back(r.name);
    std::vector<RunNote> notes;
    notes.reserve(byReason.size());
    for (auto& [why, names] : byReason)
        notes.push_back({RunNote::Kind::NoImportance, std::move(names), why + ": no weighted error"});
    return notes;
}

std::vector<RunNote> notReadNotes(const std::vector<UnlistedEntry>& unread, const std::string& exportPath) {
    std::vector<RunNote> notes;
    notes.reserve(unread.size());
    for (const UnlistedEntry& u : unread)
        notes.push_back(
            {RunNote::Kind::NotRead,
             {u.name},
             u.reason + (exportPath.empty() ? "; not read" : "; not read, so not in " + exportPath)});
    return notes;
}

std::vector<RunNote> calibrationNotes(const std::vector<TensorReport>& reports) {
    std::vector<RunNote> notes;
    for (const auto& r : reports)
        if (!r.params.calibrationNote.empty())
            notes.push_back({RunNote::Kind::Calibration, {r.name}, r.params.calibrationNote});
    return notes;
}

std::string noteText(const std::string& file, const RunNote& note) {
    if (note.tensors.size() == 1) return file + ": tensor '" + printable(note.tensors[0]) + "': " + note.text;
    if (note.tensors.empty()) return file + ": " + note.text;
    return file + ": " + std::to_string(note.tensors.size()) + " tensors ('" + note.tensors[0] +
           "', ...): " + note.text;
}

} // namespace ql
