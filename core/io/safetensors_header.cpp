#include "io/safetensors_header.h"

#include "base/error.h"
#include "io/untrusted_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ql {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& file, const std::string& reason) {
    throw FileError(file + ": " + reason);
}

[[noreturn]] void failTensor(const std::string& file, const std::string& tensor, const std::string& reason) {
    throw FileError(file + ": tensor '" + tensor + "': " + reason);
}

std::uint64_t unsignedField(const json& v, const std::string& file, const std::string& tensor,
                            const char* what) {
    if (!v.is_number_unsigned())
        failTensor(file, tensor, std::string(what) + " must be a non-negative integer, got " + v.dump());
    return v.get<std::uint64_t>();
}

SafetensorsEntry parseEntry(const std::string& name, const json& v, std::uint64_t dataSize,
                            const std::string& file) {
    if (name.empty()) fail(file, "a tensor has an empty name");
    if (!v.is_object()) failTensor(file, name, "entry must be a JSON object, got " + v.dump());
    for (const auto& [key, _] : v.items())
        if (key != "dtype" && key != "shape" && key != "data_offsets")
            failTensor(file, name, "unexpected field '" + key + "'");
    if (!v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
        failTensor(file, name, "entry needs dtype, shape and data_offsets");

    SafetensorsEntry e;
    e.name = name;
    const json& dt = v["dtype"];
    if (!dt.is_string()) failTensor(file, name, "dtype must be a string");
    const auto dtype = dtypeFromSafetensors(dt.get<std::string>());
    if (!dtype) failTensor(file, name, "unknown dtype '" + dt.get<std::string>() + "'");
    e.dtype = *dtype;

    const json& sh = v["shape"];
    if (!sh.is_array()) failTensor(file, name, "shape must be an array");
    std::uint64_t elements = 1;
    bool overflow = false;
    for (const json& d : sh) {
        const std::uint64_t n = unsignedField(d, file, name, "a shape dimension");
        if (n > static_cast<std::uint64_t>(INT64_MAX)) failTensor(file, name, "shape dimension too large");
        e.shape.push_back(static_cast<std::int64_t>(n));
        overflow = overflow || __builtin_mul_overflow(elements, n, &elements);
    }
    std::uint64_t bytes = 0;
    overflow = overflow || !dimensionsFit(e.shape, static_cast<std::uint64_t>(storageBytes(e.dtype))) ||
               __builtin_mul_overflow(elements, static_cast<std::uint64_t>(storageBytes(e.dtype)), &bytes);

    const json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2) failTensor(file, name, "data_offsets must be [begin, end]");
    e.begin = unsignedField(off[0], file, name, "data_offsets begin");
    e.end = unsignedField(off[1], file, name, "data_offsets end");
    if (e.end < e.begin)
        failTensor(file, name,
                   "data_offsets end " + std::to_string(e.end) + " is before begin " +
                       std::to_string(e.begin));
    if (e.end > dataSize)
        failTensor(file, name,
                   "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                       ") run past the end of the data (" + std::to_string(dataSize) +
                       " bytes; file truncated?)");
    if (overflow || bytes != e.end - e.begin)
        failTensor(file, name,
                   "byte count " + std::to_string(e.end - e.begin) + " does not match " +
                       std::string(safetensorsName(e.dtype)) + " x " + toString(e.shape) +
                       (overflow ? " (size overflows)" : " = " + std::to_string(bytes) + " bytes"));
    return e;
}

std::map<std::string, std::string> parseMetadata(const json& v, const std::string& file) {
    if (!v.is_object()) fail(file, "__metadata__ must be an object of strings");
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : v.items()) {
        if (!value.is_string()) fail(file, "__metadata__ entry '" + key + "' is not a string");
        out.emplace(key, value.get<std::string>());
    }
    return out;
}

} // namespace

std::uint64_t safetensorsHeaderLength(std::span<const std::byte> first8, std::uint64_t fileSize,
                                      const std::string& fileName) {
    if (first8.size() < 8 || fileSize < 8)
        fail(fileName,
             "file is truncated: " + std::to_string(fileSize) + " bytes, too short for a safetensors header");
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | std::to_integer<std::uint64_t>(first8[static_cast<std::size_t>(i)]);
    if (n > kMaxSafetensorsHeader)
        fail(fileName, "header length " + std::to_string(n) + " is absurdly large (limit " +
                           std::to_string(kMaxSafetensorsHeader) + " bytes); not a safetensors file?");
    if (n > fileSize - 8)
        fail(fileName, "header length " + std::to_string(n) + " is larger than the file (" +
                           std::to_string(fileSize) + " bytes); file truncated?");
    if (n < 2) fail(fileName, "header length " + std::to_string(n) + " is too small for a JSON object");
    return n;
}

SafetensorsHeader parseSafetensorsHeader(std::string_view text, std::uint64_t dataSize,
                                         const std::string& fileName) {
    // Depth and duplicate keys first, in one linear pass: nlohmann keeps the last of duplicate keys
    // silently (the reference reader refuses them), and a deeply nested tree would overflow the stack
    // when printed in a message or destroyed. A header is three levels deep.
    checkJsonShape(text, fileName, "header", 8);
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        // Ill-formed UTF-8 is a parse error, a number beyond double an out_of_range; the text says which.
        fail(fileName, std::string("header is not valid JSON/UTF-8: ") + e.what());
    }
    if (!root.is_object()) fail(fileName, "header must be a JSON object");

    SafetensorsHeader h;
    h.dataStart = 8 + text.size();
    for (const auto& [key, value] : root.items()) {
        if (key == "__metadata__")
            h.metadata = parseMetadata(value, fileName);
        else
            h.entries.push_back(parseEntry(key, value, dataSize, fileName));
    }
    std::sort(h.entries.begin(), h.entries.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    // As the reference reader validates: sorted by offset, each tensor starts where the one before
    // ends (no overlap, no hole), and the last ends where the file does (no trailing bytes).
    std::uint64_t expected = 0;
    const SafetensorsEntry* prev = nullptr;
    for (const auto& e : h.entries) {
        if (e.begin < expected)
            fail(fileName, "tensors '" + prev->name + "' and '" + e.name + "' overlap (bytes [" +
                               std::to_string(e.begin) + ", " + std::to_string(std::min(expected, e.end)) +
                               ") are shared)");
        if (e.begin > expected)
            failTensor(fileName, e.name,
                       "starts at byte " + std::to_string(e.begin) + " of the data, leaving a hole of " +
                           std::to_string(e.begin - expected) + " bytes after " +
                           (prev ? "'" + prev->name + "'" : std::string("the header")));
        expected = e.end;
        prev = &e;
    }
    if (expected != dataSize)
        fail(fileName, std::to_string(dataSize - expected) +
                           " bytes after the last tensor belong to none (file "
                           "longer than its header says)");
    return h;
}

SafetensorsHeader parseSafetensors(std::span<const std::byte> file, const std::string& fileName) {
    const std::uint64_t n =
        safetensorsHeaderLength(file.first(std::min<std::size_t>(8, file.size())), file.size(), fileName);
    const auto* text = reinterpret_cast<const char*>(file.data() + 8);
    return parseSafetensorsHeader(std::string_view(text, n), file.size() - 8 - n, fileName);
}

} // namespace ql
