#pragma once
// Structure-aware generators for the parser fuzz suite: GGUF headers whose metadata and tensor infos
// are drawn from the format's own grammar (so the parser gets past the magic and the counts), and
// byte- and token-level mutations of real files written by QuantLens itself.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace qlfuzz {

class Rng {
public:
    explicit Rng(std::uint64_t seed)
        : m_g(seed) {}
    std::uint64_t bits() { return m_g(); }
    /// Uniform in [0, n).
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : m_g() % n; }
    bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }
    /// A size that is usually small, sometimes at a boundary, rarely absurd.
    std::uint64_t size() {
        static const std::uint64_t edges[] = {0,          1,          2,          31,         32,
                                              255,        256,        65535,      65536,      1ull << 31,
                                              1ull << 32, 1ull << 40, 1ull << 62, ~0ull >> 1, ~0ull};
        if (chance(80)) return below(24);
        return edges[below(sizeof edges / sizeof edges[0])];
    }
    /// A name: plain, dotted, with control characters, quotes, long, or not UTF-8.
    std::string name() {
        static const char* pieces[] = {"blk", ".",      "0",  "weight",      "attn_q", "\x1b[2J",
                                       "\n",  "=q8_0 ", "\"", "../",         "\xff",   "\xe2\x80\xa8",
                                       " ",   "%s",     "\t", "\xef\xbf\xbe"};
        std::string s;
        const std::uint64_t n = chance(3) ? 3000 : 1 + below(6);
        for (std::uint64_t i = 0; i < n; ++i)
            s += pieces[below(sizeof pieces / sizeof pieces[0])];
        return s;
    }

private:
    std::mt19937_64 m_g;
};

/// Little-endian GGUF bytes, written field by field.
class GgufWriter {
public:
    template <typename T> void put(T v) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        m_bytes.append(b, sizeof(T));
    }
    void string(const std::string& s, std::uint64_t claimed) {
        put<std::uint64_t>(claimed);
        m_bytes += s;
    }
    void string(const std::string& s) { string(s, s.size()); }
    void raw(const std::string& s) { m_bytes += s; }
    std::string& bytes() { return m_bytes; }

private:
    std::string m_bytes;
};

/// One metadata value of `type` (gguf.h ids, 0..12; others are invalid on purpose).
inline void ggufValue(GgufWriter& w, Rng& r, std::uint32_t type, int depth) {
    switch (type) {
    case 0:
    case 1:
    case 7:
        w.put<std::uint8_t>(static_cast<std::uint8_t>(r.bits()));
        break;
    case 2:
    case 3:
        w.put<std::uint16_t>(static_cast<std::uint16_t>(r.bits()));
        break;
    case 4:
    case 5:
        w.put<std::uint32_t>(static_cast<std::uint32_t>(r.chance(50) ? r.size() : r.bits()));
        break;
    case 6: {
        float f = static_cast<float>(r.bits() % 1000) / 7.0f;
        w.put(f);
        break;
    }
    case 8: {
        const std::string s = r.name();
        w.string(s, r.chance(5) ? r.size() : s.size());
        break;
    }
    case 9: {
        auto et = static_cast<std::uint32_t>(depth < 3 && r.chance(20) ? 9 : r.below(14));
        if (et == 9 && depth >= 3) et = 8; // the generator's own nesting stays bounded
        w.put<std::uint32_t>(et);
        const std::uint64_t n = r.chance(10) ? r.size() : r.below(40);
        w.put<std::uint64_t>(n);
        for (std::uint64_t i = 0; i < std::min<std::uint64_t>(n, 64); ++i)
            ggufValue(w, r, et, depth + 1);
        break;
    }
    case 10:
    case 11:
        w.put<std::uint64_t>(r.chance(50) ? r.size() : r.bits());
        break;
    case 12:
        w.put<double>(static_cast<double>(r.bits() % 100000) / 3.0);
        break;
    default:
        w.put<std::uint32_t>(static_cast<std::uint32_t>(r.bits()));
        break; // whatever follows
    }
}

/// A GGUF file: a valid frame (magic, version, counts) around metadata and tensor infos drawn at
/// random, most of them well-formed, so that each run reaches the checks deep in the header.
inline std::string ggufFile(Rng& r) {
    GgufWriter w;
    w.raw(r.chance(2) ? "GGUX" : "GGUF");
    w.put<std::uint32_t>(r.chance(5) ? static_cast<std::uint32_t>(r.below(6)) : 3);
    const std::uint64_t tensors = r.below(6), kvs = r.below(8);
    w.put<std::uint64_t>(r.chance(5) ? r.size() : tensors);
    w.put<std::uint64_t>(r.chance(5) ? r.size() : kvs);
    std::uint64_t alignment = 32;
    for (std::uint64_t k = 0; k < kvs; ++k) {
        if (r.chance(15)) {
            alignment = r.chance(50) ? (1ull << r.below(10)) : r.size();
            w.string("general.alignment");
            w.put<std::uint32_t>(4);
            w.put<std::uint32_t>(static_cast<std::uint32_t>(alignment));
            continue;
        }
        w.string(r.chance(10) ? std::string(r.below(300000), 'k') : r.name());
        const auto type = static_cast<std::uint32_t>(r.chance(3) ? r.below(40) : r.below(13));
        w.put<std::uint32_t>(type);
        ggufValue(w, r, type, 0);
    }
    std::uint64_t offset = 0;
    for (std::uint64_t t = 0; t < tensors; ++t) {
        w.string(r.chance(20) ? std::string("dup") : r.name());
        const auto dims = static_cast<std::uint32_t>(r.chance(5) ? r.below(12) : 1 + r.below(3));
        w.put<std::uint32_t>(dims);
        std::uint64_t elements = 1;
        for (std::uint32_t d = 0; d < dims; ++d) {
            const std::uint64_t ne = r.chance(10) ? r.size() : 1 + r.below(64);
            elements *= ne;
            w.put<std::uint64_t>(ne);
        }
        // f32, f16, q4_0, q8_0, q4_K, q6_K, bf16, an i-quant, an unknown id
        static const std::uint32_t types[] = {0, 1, 2, 8, 12, 14, 30, 23, 99};
        w.put<std::uint32_t>(types[r.below(sizeof types / sizeof types[0])]);
        w.put<std::uint64_t>(r.chance(10) ? r.size() : offset);
        offset += (elements * 4 + 31) / 32 * 32;
    }
    while (w.bytes().size() % 32)
        w.raw(std::string(1, '\0'));
    const std::uint64_t data = r.chance(30) ? r.below(4096) : std::min<std::uint64_t>(offset, 1 << 20);
    for (std::uint64_t i = 0; i < data; i += 8)
        w.put<std::uint64_t>(r.bits());
    return w.bytes();
}

/// Byte-level damage: flips, truncation, a splice of a run of bytes, an extreme integer written over.
inline std::string mutateBytes(std::string s, Rng& r) {
    if (s.empty()) return s;
    const int edits = 1 + static_cast<int>(r.below(4));
    for (int e = 0; e < edits && !s.empty(); ++e) {
        const std::size_t at = r.below(s.size());
        switch (r.below(5)) {
        case 0:
            s[at] = static_cast<char>(s[at] ^ (1 << r.below(8)));
            break;
        case 1:
            s.resize(at);
            break;
        case 2:
            s.insert(at, s.substr(r.below(s.size()), r.below(64)));
            break;
        case 3: {
            const std::uint64_t v = r.size();
            for (std::size_t k = 0; k < 8 && at + k < s.size(); ++k)
                s[at + k] = static_cast<char>(v >> (8 * k));
            break;
        }
        default:
            s.erase(at, r.below(16));
            break;
        }
    }
    return s;
}

} // namespace qlfuzz
