#include "io/mapped_file.h"

#include "base/error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ql {

std::string systemReason(int err) {
    return std::strerror(err);
}

void readExactly(int fd, void* out, std::size_t size, std::uint64_t offset, const std::string& path) {
    auto* dst = static_cast<char*>(out);
    while (size > 0) {
        const ssize_t n = ::pread(fd, dst, size, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw FileError(path + ": read failed: " + systemReason(errno));
        if (n == 0) throw FileError(path + ": file is truncated (unexpected end of file)");
        dst += n;
        size -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
}

void requireRegularFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw FileError(path + ": cannot open: " + systemReason(errno));
    if (!S_ISREG(st.st_mode))
        throw FileError(path + ": not a regular file (" +
                        (S_ISDIR(st.st_mode)    ? "a folder"
                         : S_ISFIFO(st.st_mode) ? "a FIFO"
                         : S_ISSOCK(st.st_mode) ? "a socket"
                                                : "a device") +
                        "); QuantLens reads regular files only");
}

std::string readSmallFile(const std::string& path, std::uint64_t maxBytes, const char* what) {
    requireRegularFile(path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw FileError(path + ": cannot open: " + systemReason(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { // replaced since the check: read nothing
        ::close(fd);
        throw FileError(path + ": not a regular file");
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > maxBytes) {
        ::close(fd);
        throw FileError(path + ": " + std::to_string(size) + " bytes is too large for " + what +
                        " (at most " + std::to_string(maxBytes) + ")");
    }
    std::string text(static_cast<std::size_t>(size), '\0');
    try {
        readExactly(fd, text.data(), text.size(), 0, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return text;
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
    // O_NONBLOCK: a FIFO put where a model was expected must not block the open (regular files
    // ignore the flag); it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw FileError(path + ": cannot open: " + systemReason(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw FileError(path + ": cannot stat: " + systemReason(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        requireRegularFile(path); // the reason in words
        throw FileError(path + ": not a regular file");
    }
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = path;
    file->m_size = static_cast<std::uint64_t>(st.st_size);
    if (file->m_size > 0) {
        void* p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw FileError(path + ": cannot memory-map: " + systemReason(err));
        }
        file->m_data = static_cast<const std::byte*>(p);
    }
    ::close(fd); // the mapping keeps the file open
    return file;
}

MappedFile::~MappedFile() {
    if (m_data) ::munmap(const_cast<std::byte*>(m_data), m_size);
}

void MappedFile::release(std::uint64_t offset, std::uint64_t size) const {
    if (!m_data || offset >= m_size) return;
    size = std::min(size, m_size - offset);
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t first = (offset + page - 1) / page * page, end = (offset + size) / page * page;
    if (end > first) ::madvise(const_cast<std::byte*>(m_data) + first, end - first, MADV_DONTNEED);
}

} // namespace ql
