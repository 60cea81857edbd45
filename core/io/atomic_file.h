#pragma once
// Never half-written output: bytes go to a uniquely named temporary file (created exclusively) next
// to the target, which is flushed to disk and renamed over the target only on commit(). Destroying an
// uncommitted AtomicFile (an exception, a cancel) removes the temporary and leaves the target as it
// was; so does SIGINT or SIGTERM while it is alive, once the program has called
// removeTemporariesOnSignals().
#include <cstddef>
#include <string>

namespace ql {

class AtomicFile {
public:
    /// Creates the temporary in the target's folder (rename is atomic only within a filesystem).
    /// Refuses a target that is the same file as `sourcePath` (the file being read).
    explicit AtomicFile(std::string target, const std::string& sourcePath = {});
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    const std::string& target() const { return m_target; }
    /// For writers that open the file by name themselves (HDF5).
    const std::string& tempPath() const { return m_temp; }
    /// Appends bytes at the current end; throws FileError naming the target.
    void write(const void* data, std::size_t size);
    /// fsync, rename over the target, fsync the folder.
    void commit();

private:
    std::string m_target;
    std::string m_temp;
    int m_fd = -1;
    int m_slot = -1; // in the signal handler's table of live temporaries
    bool m_committed = false;
};

/// Installs SIGINT and SIGTERM handlers that remove every live AtomicFile temporary and then end the
/// process as the signal would have. The programs call it once at start (signal policy is theirs).
void removeTemporariesOnSignals();

/// Throws FileError when `target` names the same file as `sourcePath` (or would overwrite it).
void refuseOverwritingSource(const std::string& target, const std::string& sourcePath);

} // namespace ql
