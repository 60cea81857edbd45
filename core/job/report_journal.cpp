#include "job/report_journal.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/untrusted_json.h"
#include "report/report_format.h"

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>
#include <utility>

namespace ql {
namespace {

using nlohmann::json;

constexpr const char* kJournalTag = "quantlens report journal 1";

// Reads the complete lines of a journal of the run `header` describes; returns the byte length of
// the part kept (everything after it — a torn line — is cut off before appending).
std::uint64_t readJournal(const std::string& path, const json& header,
                          std::map<std::int64_t, json>& entries) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return 0;
    std::string line;
    std::uint64_t kept = 0;
    bool first = true;
    while (std::getline(in, line)) {
        if (in.eof()) break; // no newline: the write was cut short
        checkJsonShape(line, path, "journal line", 16);
        json j = json::parse(line, nullptr, false);
        if (first) {
            if (j.is_discarded() || !j.is_object() || !j.contains("journal") || j["journal"] != kJournalTag)
                throw FileError(path +
                                ": not a QuantLens report journal; remove it or choose another --report");
            // Entries hold the report's histograms: a journal of another format version (one with no
            // version is version 1) would mix two kinds of edges in one report.
            const json version = j.value("format_version", json(1));
            if (version != kReportFormatVersion)
                throw FileError(path + ": left by a QuantLens writing report format version " +
                                version.dump() + " (this one writes " + std::to_string(kReportFormatVersion) +
                                "); remove it or run without --resume");
            if (j["run"] != header)
                throw FileError(path +
                                ": left by another run (other file, spec, selection or shard); remove it "
                                "or run without --resume");
            first = false;
        } else {
            if (j.is_discarded() || !j.is_object() || !j.contains("position") ||
                !j["position"].is_number_integer() || !j.contains("entry") || !j["entry"].is_object())
                break; // a damaged line ends what can be trusted
            entries[j["position"].get<std::int64_t>()] = std::move(j["entry"]);
        }
        kept += line.size() + 1;
    }
    return kept;
}

} // namespace

ReportJournal::ReportJournal(std::string path, json header, bool resume)
    : m_path(std::move(path)) {
    std::uint64_t kept = 0;
    if (resume && ::access(m_path.c_str(), F_OK) == 0) {
        requireRegularFile(m_path);
        kept = readJournal(m_path, header, m_entries);
    }
    m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (m_fd < 0) throw FileError(m_path + ": cannot write the journal: " + systemReason(errno));
    if (::ftruncate(m_fd, static_cast<off_t>(kept)) != 0 || ::lseek(m_fd, 0, SEEK_END) < 0) {
        const int err = errno;
        ::close(m_fd);
        throw FileError(m_path + ": cannot write the journal: " + systemReason(err));
    }
    if (kept == 0) {
        m_entries.clear();
        writeLine({{"journal", kJournalTag}, {"format_version", kReportFormatVersion}, {"run", header}});
    }
}

ReportJournal::~ReportJournal() {
    if (m_fd >= 0) ::close(m_fd);
}

void ReportJournal::append(std::int64_t position, const json& entry) {
    writeLine({{"position", position}, {"entry", entry}});
    m_entries[position] = entry;
}

void ReportJournal::writeLine(const json& line) {
    const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(m_fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw FileError(m_path + ": cannot write the journal: " + systemReason(errno));
        done += static_cast<std::size_t>(n);
    }
    ::fdatasync(m_fd);
}

void ReportJournal::remove() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    ::unlink(m_path.c_str());
}

} // namespace ql
