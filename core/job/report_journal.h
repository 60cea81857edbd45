#pragma once
// A shard's progress on disk, so that a killed task resumed with --resume redoes no finished
// tensor: a header line naming the run, then one JSON line per finished tensor (its place in the
// run and its report entry), each written whole and flushed to disk before the next tensor starts.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ql {

class ReportJournal {
public:
    /// Opens the journal at `path` for the run `header` describes. With `resume`, the entries a
    /// journal of the same run already holds are read (a torn last line, from a kill mid-write, is
    /// dropped) and appending continues after them; without, the journal starts afresh. Throws
    /// FileError when the journal belongs to another run or cannot be written.
    ReportJournal(std::string path, nlohmann::json header, bool resume);
    ~ReportJournal();
    ReportJournal(const ReportJournal&) = delete;
    ReportJournal& operator=(const ReportJournal&) = delete;

    /// Position in the run → report entry, for every tensor finished so far.
    const std::map<std::int64_t, nlohmann::json>& entries() const { return m_entries; }
    void append(std::int64_t position, const nlohmann::json& entry);
    /// Deletes the journal once the report holding its entries is in place.
    void remove();

private:
    void writeLine(const nlohmann::json& line);

    std::string m_path;
    int m_fd = -1;
    std::map<std::int64_t, nlohmann::json> m_entries;
};

} // namespace ql
