#include "io/safetensors_writer.h"

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/untrusted_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace ql {

void writeSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata, const std::string& sourcePath) {
    // Insertion order keeps the header readable in the order the caller chose.
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::set<std::string> names;
    std::uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {
        if (name.empty()) throw FileError(path + ": cannot write a tensor with an empty name");
        if (!isValidUtf8(name))
            throw FileError(
                path + ": tensor " +
                nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                ": its name is not valid UTF-8, which a safetensors header must be");
        if (name == "__metadata__") throw FileError(path + ": '__metadata__' is reserved, not a tensor name");
        if (!names.insert(name).second) throw FileError(path + ": tensor '" + name + "' is given twice");
        const auto dtype = safetensorsName(t.dtype());
        if (dtype.empty())
            throw FileError(path + ": tensor '" + name + "': safetensors has no dtype for " +
                            std::string(nameOf(t.dtype())) + " (pack or widen it first)");
        const std::uint64_t size = t.byteSize();
        if (size > 0 && !t.data()) throw FileError(path + ": tensor '" + name + "' has no data");
        header[name] = {{"dtype", dtype}, {"shape", t.shape()}, {"data_offsets", {offset, offset + size}}};
        offset += size;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');

    AtomicFile out(path, sourcePath);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i)
        len[i] = static_cast<unsigned char>((text.size() >> (8 * i)) & 0xff);
    out.write(len, 8);
    out.write(text.data(), text.size());
    constexpr std::size_t kChunk = 64u << 20; // bounded write calls for multi-GB tensors
    for (const auto& nt : tensors) {
        const auto* p = nt.tensor.data();
        for (std::size_t left = nt.tensor.byteSize(); left > 0;) {
            const std::size_t n = std::min(left, kChunk);
            out.write(p, n);
            p += n;
            left -= n;
        }
    }
    out.commit();
}

} // namespace ql
