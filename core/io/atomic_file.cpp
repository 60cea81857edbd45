#include "io/atomic_file.h"

#include <cerrno>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "io/mapped_file.h"
#include "tensor/error.h"

namespace fs = std::filesystem;

namespace ql {

void refuseOverwritingSource(const std::string& target, const std::string& sourcePath) {
    if (sourcePath.empty()) return;
    std::error_code ec;
    const bool same = fs::exists(target, ec) && fs::exists(sourcePath, ec)
        ? fs::equivalent(target, sourcePath, ec)
        : fs::weakly_canonical(target, ec) == fs::weakly_canonical(sourcePath, ec);
    if (same)
        throw FileError(target + ": refusing to write over the file being read (" + sourcePath
                        + "); choose another output file");
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
        throw FileError(m_target + ": cannot create a temporary file in " + dir.string() + ": "
                        + systemReason(errno));
    m_temp.assign(buf.data());
    // mkstemp creates 0600; an exported model is an ordinary shareable file.
    ::fchmod(m_fd, 0644);
}

AtomicFile::~AtomicFile() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed && !m_temp.empty()) ::unlink(m_temp.c_str());
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
