#include "io/importance_file.h"

#include "base/error.h"
#include "io/gguf_source.h"
#include "io/importance_file_check.h"
#include "io/mapped_file.h"
#include "io/printable.h"

#include <cmath>
#include <cstring>

namespace ql {

namespace importance_detail {

void checkEntry(const std::string& path, const std::string& name, const ImportanceEntry& entry) {
    const std::string where = path + ": entry '" + printable(name) + "': ";
    if (entry.sqMean.empty()) throw FileError(where + "holds no values");
    if (entry.matrices < 1 || entry.sqMean.size() % static_cast<std::size_t>(entry.matrices) != 0)
        throw FileError(where + std::to_string(entry.sqMean.size()) + " values are not " +
                        std::to_string(entry.matrices) + " equal matrices");
    for (std::size_t i = 0; i < entry.sqMean.size(); ++i) {
        const float v = entry.sqMean[i];
        if (!std::isfinite(v) || v < 0.0f) {
            const std::size_t per = entry.sqMean.size() / static_cast<std::size_t>(entry.matrices);
            throw FileError(where + "mean of squares " + std::to_string(v) + " at matrix " +
                            std::to_string(i / per) + ", channel " + std::to_string(i % per) +
                            (std::isfinite(v) ? " is negative" : " is not finite"));
        }
    }
}

void addEntry(ImportanceFile& file, const std::string& name, ImportanceEntry entry) {
    checkEntry(file.path, name, entry);
    if (!file.entries.emplace(name, std::move(entry)).second)
        throw FileError(file.path + ": entry '" + printable(name) + "' appears twice");
}

} // namespace importance_detail

namespace {

/// Bounds-checked little-endian reads over the legacy file; every failure names what was read.
class LegacyReader {
public:
    LegacyReader(const MappedFile& file)
        : m_data(file.data())
        , m_size(file.size())
        , m_path(file.path()) {}

    std::uint64_t left() const { return m_size - m_pos; }
    [[noreturn]] void fail(const std::string& reason) const { throw FileError(m_path + ": " + reason); }
    void need(std::uint64_t n, const std::string& what) const {
        if (n > left())
            fail("truncated at byte " + std::to_string(m_pos) + ": " + what + " needs " + std::to_string(n) +
                 " bytes, " + std::to_string(left()) + " left");
    }
    std::int32_t i32(const std::string& what) {
        need(4, what);
        std::int32_t v;
        std::memcpy(&v, m_data + m_pos,
                    4); // llama.cpp writes host order; every host we build for is little-endian
        m_pos += 4;
        return v;
    }
    std::string bytes(std::uint64_t n, const std::string& what) {
        need(n, what);
        std::string s(reinterpret_cast<const char*>(m_data + m_pos), static_cast<std::size_t>(n));
        m_pos += n;
        return s;
    }
    void floats(float* out, std::uint64_t n, const std::string& what) {
        need(n * 4, what);
        std::memcpy(out, m_data + m_pos, static_cast<std::size_t>(n * 4));
        m_pos += n * 4;
    }

private:
    const std::byte* m_data;
    std::uint64_t m_size;
    std::uint64_t m_pos = 0;
    const std::string& m_path;
};

// The smallest entry: name length, a 1-byte name, ncall, nval and one value.
constexpr std::uint64_t kMinLegacyEntry = 4 + 1 + 4 + 4 + 4;

ImportanceFile readLegacy(const MappedFile& mapped) {
    // Layout of llama.cpp's IMatrixCollector::save_imatrix_legacy and its readers
    // (tools/imatrix/imatrix.cpp at 006e7ef9, common/imatrix-loader.cpp at 0a32c5ee, read November
    // 2026): int32 n_entries; per entry int32 length, the name, int32 ncall, int32 nval, nval
    // float32 holding (sum / count) * ncall; then, optionally, int32 last chunk and int32 length +
    // the dataset file name.
    ImportanceFile file;
    file.path = mapped.path();
    file.format = kImatrixLegacyFormat;
    LegacyReader r(mapped);
    const std::int32_t n = r.i32("the entry count");
    if (n < 1) r.fail("entry count " + std::to_string(n) + ": an importance matrix holds at least one entry");
    if (static_cast<std::uint64_t>(n) > r.left() / kMinLegacyEntry)
        r.fail("entry count " + std::to_string(n) + " cannot fit in a file of " +
               std::to_string(mapped.size()) + " bytes");
    for (std::int32_t i = 0; i < n; ++i) {
        const std::string which = "entry " + std::to_string(i + 1) + " of " + std::to_string(n);
        const std::int32_t len = r.i32(which + "'s name length");
        if (len < 1) r.fail(which + ": name length " + std::to_string(len));
        const std::string name = r.bytes(static_cast<std::uint64_t>(len), which + "'s name");
        if (name.find('\0') != std::string::npos) r.fail(which + ": the name holds a NUL byte");
        const std::string where = "entry '" + printable(name) + "'";
        const std::int32_t ncall = r.i32(where + "'s ncall");
        if (ncall < 0) r.fail(where + ": negative ncall " + std::to_string(ncall));
        const std::int32_t nval = r.i32(where + "'s value count");
        if (nval < 1) r.fail(where + ": value count " + std::to_string(nval) + " (at least 1)");
        if (static_cast<std::uint64_t>(nval) > r.left() / 4)
            r.fail(where + ": " + std::to_string(nval) + " values need " + std::to_string(4ull * nval) +
                   " bytes, the file has " + std::to_string(r.left()) + " left");
        ImportanceEntry e;
        e.sqMean.resize(static_cast<std::size_t>(nval));
        r.floats(e.sqMean.data(), static_cast<std::uint64_t>(nval), where + "'s values");
        // llama-quantize's load_legacy_imatrix: `for (auto& v : e) v /= ncall;` when ncall > 0 (a
        // float divided by the int converted to float); the values are used as stored otherwise.
        if (ncall > 0)
            for (float& v : e.sqMean)
                v /= static_cast<float>(ncall);
        importance_detail::addEntry(file, name, std::move(e));
    }
    // The trailer is absent in older files; when present it is whole.
    if (r.left() > 0) {
        const std::int32_t chunks = r.i32("the chunk count after the entries");
        if (chunks < 0) r.fail("negative chunk count " + std::to_string(chunks));
        file.chunks = chunks;
        const std::int32_t len = r.i32("the dataset name's length");
        if (len < 0) r.fail("negative dataset name length " + std::to_string(len));
        const std::string dataset = r.bytes(static_cast<std::uint64_t>(len), "the dataset name");
        if (len > 0) file.datasets.push_back(dataset);
        if (r.left() > 0) r.fail(std::to_string(r.left()) + " unexpected bytes after the dataset name");
    }
    return file;
}

} // namespace

ImportanceFile readImatrixLegacy(const std::string& path) {
    return readLegacy(*MappedFile::open(path));
}

ImportanceFile readImportanceFile(const std::string& path) {
    const auto mapped = MappedFile::open(path);
    const char* head = reinterpret_cast<const char*>(mapped->data());
    const auto size = static_cast<std::size_t>(mapped->size());
    if (size == 0) throw FileError(path + ": empty file, not an importance file");
    if (hasGgufMagic(head, size)) return readImatrixGguf(path);
    // safetensors: an 8-byte header length, then the JSON header's '{' (a legacy file has the
    // first name's first character there).
    if (size >= 9 && head[8] == '{') return readSafetensorsStatistics(path);
    return readLegacy(*mapped);
}

} // namespace ql
