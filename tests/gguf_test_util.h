#pragma once
// Crafting GGUF files byte by byte, for the suites that test the reader on what it must refuse.
#include <cstdint>
#include <string>
#include <vector>

namespace qltest::gguf_bytes {

// Little-endian pieces of a GGUF header.
inline void u32(std::string& s, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        s += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void u64(std::string& s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        s += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void str(std::string& s, const std::string& text) {
    u64(s, text.size());
    s += text;
}
inline std::string kvU32(const std::string& key, std::uint32_t type, std::uint32_t v) {
    std::string s;
    str(s, key);
    u32(s, type);
    if (type == 10)
        u64(s, v);
    else
        u32(s, v);
    return s;
}
inline std::string info(const std::string& name, const std::vector<std::uint64_t>& ne, std::uint32_t type,
                        std::uint64_t offset) {
    std::string s;
    str(s, name);
    u32(s, static_cast<std::uint32_t>(ne.size()));
    for (auto n : ne)
        u64(s, n);
    u32(s, type);
    u64(s, offset);
    return s;
}
/// A whole file: header, kvs, infos, padding to `align`, then `data`.
inline std::string gguf(std::uint64_t nKv, const std::string& kvs, std::uint64_t nTensors,
                        const std::string& infos, std::size_t dataBytes = 0, std::uint32_t version = 3,
                        std::size_t align = 32) {
    std::string s = "GGUF";
    u32(s, version);
    u64(s, nTensors);
    u64(s, nKv);
    s += kvs + infos;
    while (s.size() % align)
        s += '\0';
    return s + std::string(dataBytes, '\x01');
}

} // namespace qltest::gguf_bytes
