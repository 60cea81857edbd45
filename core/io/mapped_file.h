#pragma once
// A read-only memory mapping of a whole file. Mapping costs no resident memory until pages are
// touched, which is what lets listing a multi-GB checkpoint stay cheap.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ql {

/// Throws FileError unless `path` names a regular file (after symlinks): a FIFO, socket, device or
/// folder given as a model, shard, index or scale file would block or mislead a reader.
void requireRegularFile(const std::string& path);

class MappedFile {
public:
    /// Throws FileError naming the file when it cannot be opened or mapped.
    static std::shared_ptr<const MappedFile> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::string& path() const { return m_path; }
    std::uint64_t size() const { return m_size; }
    const std::byte* data() const { return m_data; }
    /// Gives back this process's resident pages of [offset, offset + size) (whole pages inside it);
    /// the data stays readable — touched again, it is read from the file (or the system's cache).
    void release(std::uint64_t offset, std::uint64_t size) const;

private:
    MappedFile() = default;
    std::string m_path;
    std::uint64_t m_size = 0;
    const std::byte* m_data = nullptr;
};

/// The whole of a small file (a report, an index, rules, a config): a regular file of at most
/// `maxBytes`, else FileError naming `path` and saying which (`what`: "a report", ...).
std::string readSmallFile(const std::string& path, std::uint64_t maxBytes, const char* what);

/// Reads exactly `size` bytes at `offset` with pread; throws FileError (naming `path`) on a short read.
void readExactly(int fd, void* out, std::size_t size, std::uint64_t offset, const std::string& path);
/// errno as text, for messages.
std::string systemReason(int err);

} // namespace ql
