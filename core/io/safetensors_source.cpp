#include "io/safetensors_source.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/untrusted_json.h"

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ql {

SafetensorsSource::Shard SafetensorsSource::openShard(const std::string& path) {
    // The header is read with pread so listing touches no data pages; the mapping is only reserved.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw FileError(path + ": cannot open: " + systemReason(errno));
    Shard s;
    s.path = path;
    try {
        s.mapping = MappedFile::open(path);
        const std::uint64_t size = s.mapping->size();
        std::array<std::byte, 8> first{};
        if (size >= 8) readExactly(fd, first.data(), 8, 0, path);
        const std::uint64_t n = safetensorsHeaderLength(first, size, path);
        std::string text(n, '\0');
        readExactly(fd, text.data(), n, 8, path);
        s.header = parseSafetensorsHeader(text, size - 8 - n, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return s;
}

void SafetensorsSource::add(std::size_t shard, std::size_t entry) {
    const Shard& s = m_shards[shard];
    const SafetensorsEntry& e = s.header.entries[entry];
    if (!m_where.emplace(e.name, Where{shard, entry}).second)
        throw FileError(m_path + ": tensor '" + e.name + "' appears in more than one shard");
    TensorInfo info;
    info.name = e.name;
    info.dtype = e.dtype;
    info.shape = e.shape;
    info.byteSize = e.end - e.begin;
    info.location =
        fs::path(s.path).filename().string() + " @ " + std::to_string(s.header.dataStart + e.begin);
    m_infos.push_back(std::move(info));
}

std::unique_ptr<SafetensorsSource> SafetensorsSource::openFile(const std::string& path) {
    std::unique_ptr<SafetensorsSource> src(new SafetensorsSource);
    src->m_path = path;
    src->m_shards.push_back(openShard(path));
    src->m_metadata = src->m_shards[0].header.metadata;
    for (std::size_t i = 0; i < src->m_shards[0].header.entries.size(); ++i)
        src->add(0, i);
    return src;
}

// A shard index lists tensor names and shard files: a few MB for the largest models.
constexpr std::uint64_t kMaxIndexBytes = 64ULL << 20;

std::unique_ptr<SafetensorsSource> SafetensorsSource::openIndex(const std::string& indexPath) {
    const std::string text = readSmallFile(indexPath, kMaxIndexBytes, "a shard index");
    checkJsonShape(text, indexPath, "index", 16);
    nlohmann::json index;
    try {
        index = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw FileError(indexPath + ": index is not valid JSON: " + e.what());
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
        throw FileError(indexPath + ": index has no \"weight_map\" object");

    std::unique_ptr<SafetensorsSource> src(new SafetensorsSource);
    src->m_path = indexPath;
    if (index.contains("metadata") && index["metadata"].is_object())
        for (const auto& [k, v] : index["metadata"].items())
            src->m_metadata.emplace(k, v.is_string() ? v.get<std::string>() : v.dump());

    // Shards in the order their names sort (model-00001-of-00003 ...), tensors in file order.
    std::map<std::string, std::vector<std::string>> byShard;
    for (const auto& [tensor, shard] : index["weight_map"].items()) {
        if (!shard.is_string())
            throw FileError(indexPath + ": tensor '" + tensor + "': shard name must be a string");
        const std::string file = shard.get<std::string>();
        if (file.empty() || fs::path(file).is_absolute() || file.find("..") != std::string::npos)
            throw FileError(indexPath + ": tensor '" + tensor + "': shard '" + file +
                            "' must be a file name next to the index");
        byShard[file].push_back(tensor);
    }
    const fs::path dir = fs::path(indexPath).parent_path();
    for (const auto& [file, names] : byShard) {
        const std::string shardPath = (dir / file).string();
        std::error_code ec;
        if (!fs::exists(shardPath, ec))
            throw FileError(indexPath + ": missing shard '" + file + "' (needed for tensor '" +
                            names.front() + "' and " + std::to_string(names.size() - 1) + " more)");
        // A shard (or a symlink standing for one) must stay inside the model's folder.
        const fs::path real = fs::weakly_canonical(shardPath, ec),
                       realDir = fs::weakly_canonical(dir.empty() ? "." : dir, ec);
        if (real.parent_path() != realDir)
            throw FileError(indexPath + ": shard '" + file + "' resolves to " + real.string() +
                            ", outside the model's folder: refused");
        src->m_shards.push_back(openShard(shardPath));
        const std::size_t si = src->m_shards.size() - 1;
        const auto& entries = src->m_shards[si].header.entries;
        const std::set<std::string> wanted(names.begin(), names.end());
        std::size_t found = 0;
        for (std::size_t i = 0; i < entries.size(); ++i)
            if (wanted.count(entries[i].name)) {
                src->add(si, i);
                ++found;
            }
        if (found != wanted.size())
            for (const auto& n : names)
                if (!src->m_where.count(n))
                    throw FileError(indexPath + ": tensor '" + n + "' is mapped to shard '" + file +
                                    "' but that shard does not contain it");
    }
    return src;
}

std::vector<std::string> SafetensorsSource::files() const {
    std::vector<std::string> out;
    if (m_shards.size() != 1 || m_shards[0].path != m_path) out.push_back(m_path); // the index
    for (const auto& s : m_shards)
        out.push_back(s.path);
    return out;
}

const SafetensorsSource::Where& SafetensorsSource::locate(const std::string& name) const {
    const auto it = m_where.find(name);
    if (it == m_where.end()) throw FileError(m_path + ": no tensor named '" + name + "'");
    return it->second;
}

Tensor SafetensorsSource::load(const std::string& name) const {
    const Where& w = locate(name);
    const Shard& s = m_shards[w.shard];
    const SafetensorsEntry& e = s.header.entries[w.entry];
    return Tensor(e.dtype, e.shape, s.mapping->data() + s.header.dataStart + e.begin, s.mapping);
}

Tensor SafetensorsSource::loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const {
    const Where& w = locate(name);
    const Shard& s = m_shards[w.shard];
    const SafetensorsEntry& e = s.header.entries[w.entry];
    if (e.shape.empty()) throw FileError(s.path + ": tensor '" + name + "': a scalar has no rows");
    if (begin < 0 || count < 0 || begin > e.shape[0] || count > e.shape[0] - begin)
        throw FileError(s.path + ": tensor '" + name + "': rows [" + std::to_string(begin) + ", " +
                        std::to_string(begin + count) + ") are outside " + toString(e.shape));
    Shape rows = e.shape;
    rows[0] = count;
    const std::uint64_t rowBytes =
        static_cast<std::uint64_t>(elementCount(Shape(e.shape.begin() + 1, e.shape.end()))) *
        static_cast<std::uint64_t>(storageBytes(e.dtype));
    const std::byte* p =
        s.mapping->data() + s.header.dataStart + e.begin + rowBytes * static_cast<std::uint64_t>(begin);
    return Tensor(e.dtype, std::move(rows), p, s.mapping);
}

void SafetensorsSource::release(const std::string& name) const {
    const auto it = m_where.find(name);
    if (it == m_where.end()) return;
    const Shard& s = m_shards[it->second.shard];
    const SafetensorsEntry& e = s.header.entries[it->second.entry];
    s.mapping->release(s.header.dataStart + e.begin, e.end - e.begin);
}

std::optional<std::string> SafetensorsSource::textAttribute(const std::string& object,
                                                            const std::string& key) const {
    if (!object.empty()) return std::nullopt;
    const auto it = m_metadata.find(key);
    if (it == m_metadata.end()) return std::nullopt;
    return it->second;
}

std::vector<ModelInfoEntry> SafetensorsSource::modelInfo() const {
    std::vector<ModelInfoEntry> info;
    for (const auto& [key, value] : m_metadata)
        info.push_back(modelInfoEntry(key, value));
    return info;
}

} // namespace ql
