#pragma once
// The safetensors header: 8-byte little-endian length N, then N bytes of UTF-8 JSON mapping tensor
// names to {dtype, shape, data_offsets} plus an optional "__metadata__" string map. Parsing is
// strict: anything a careful reader could misinterpret is an error, never a guess.
#include "tensor/dtype.h"
#include "tensor/shape.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ql {

struct SafetensorsEntry {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    std::uint64_t begin = 0; // byte offsets relative to the start of the data section
    std::uint64_t end = 0;
};

struct SafetensorsHeader {
    std::uint64_t dataStart = 0;           // 8 + N: where offsets count from
    std::vector<SafetensorsEntry> entries; // sorted by data offset (file order)
    std::map<std::string, std::string> metadata;
};

/// Larger headers are refused as corrupt (the reference implementation's limit).
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

/// Validates the 8-byte length prefix against the file size; returns N.
std::uint64_t safetensorsHeaderLength(std::span<const std::byte> first8, std::uint64_t fileSize,
                                      const std::string& fileName);
/// Parses and checks the JSON header. `dataSize` is the file size minus 8 + N.
/// Throws FileError naming `fileName`, the tensor when known, and the reason.
SafetensorsHeader parseSafetensorsHeader(std::string_view json, std::uint64_t dataSize,
                                         const std::string& fileName);
/// Both steps over a whole file held in memory (tests and the fuzzer).
SafetensorsHeader parseSafetensors(std::span<const std::byte> file, const std::string& fileName);

} // namespace ql
