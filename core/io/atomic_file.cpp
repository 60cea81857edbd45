#include "io/atomic_file.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/run_files.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace ql {
namespace {

// Temporaries alive right now, for the SIGINT / SIGTERM handler: a fixed table of fixed buffers, so
// the handler touches no allocator and no lock (only async-signal-safe calls).
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
enum SlotState : int { kFree, kWriting, kLive }; // claimed first, then filled, then visible to the handler
struct Slot {
    std::atomic<int> state{kFree};
    char path[kPathMax] = {};
};
Slot g_slots[kSlots];

void removeTemporariesAndDie(int sig) {
    for (Slot& s : g_slots)
        if (s.state.load() == kLive) ::unlink(s.path);
    ::signal(sig, SIG_DFL); // then end as the signal would have
    ::raise(sig);
}

int registerTemporary(const std::string& path) {
    if (path.size() >= kPathMax) return -1;
    for (int i = 0; i < kSlots; ++i) {
        Slot& s = g_slots[i];
        int expected = kFree;
        if (!s.state.compare_exchange_strong(expected, kWriting)) continue; // someone else's
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.state.store(kLive);
        return i;
    }
    return -1; // more than kSlots exports at once: this one is only removed on error, not on a signal
}

void unregisterTemporary(int slot) {
    if (slot >= 0) g_slots[slot].state.store(kFree);
}

} // namespace

void removeTemporariesOnSignals() {
    for (int sig : {SIGINT, SIGTERM}) {
        struct sigaction sa {};
        sa.sa_handler = removeTemporariesAndDie;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
}

void refuseOverwritingSource(const std::string& target, const std::string& sourcePath) {
    if (sameFile(target, sourcePath))
        throw FileError(target + ": refusing to write over the file being read (" + sourcePath +
                        "); choose another output file");
}

AtomicFile::AtomicFile(std::string target, const std::string& sourcePath)
    : m_target(std::move(target)) {
    if (m_target.empty()) throw FileError("no output file name given");
    refuseOverwritingSource(m_target, sourcePath);
    const fs::path t(m_target);
    std::error_code ec;
    if (fs::is_directory(t, ec)) throw FileError(m_target + ": is a folder, not a file");
    const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
    std::string pattern = (dir / ("." + t.filename().string() + ".tmp-XXXXXX")).string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    m_fd = ::mkostemp(buf.data(), O_CLOEXEC);
    if (m_fd < 0)
        throw FileError(m_target + ": cannot create a temporary file in " + dir.string() + ": " +
                        systemReason(errno));
    m_temp.assign(buf.data());
    m_slot = registerTemporary(m_temp);
    // mkstemp creates 0600; an exported model is an ordinary shareable file.
    ::fchmod(m_fd, 0644);
}

AtomicFile::~AtomicFile() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed && !m_temp.empty()) ::unlink(m_temp.c_str());
    unregisterTemporary(m_slot);
}

void AtomicFile::write(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(m_fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw FileError(m_target + ": write failed: " + systemReason(errno));
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

void AtomicFile::commit() {
    if (m_committed) return;
    if (::fsync(m_fd) != 0) throw FileError(m_target + ": flushing to disk failed: " + systemReason(errno));
    if (::close(m_fd) != 0) {
        m_fd = -1;
        throw FileError(m_target + ": closing failed: " + systemReason(errno));
    }
    m_fd = -1;
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0)
        throw FileError(m_target + ": cannot rename the temporary file into place: " + systemReason(errno));
    m_committed = true;
    unregisterTemporary(m_slot);
    m_slot = -1;
    // Make the rename itself durable.
    const fs::path t(m_target);
    const std::string dir = t.has_parent_path() ? t.parent_path().string() : std::string(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

} // namespace ql
