#include "job/plan_names.h"

#include "io/gguf_blocks.h"
#include "io/printable.h"

#include <cstdio>

namespace ql {
namespace {

constexpr std::size_t kGgmlMaxName = 64; // GGML_MAX_NAME: a name and its NUL

bool lowerAlnum(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool asciiAlnum(unsigned char c) {
    return lowerAlnum(c) || (c >= 'A' && c <= 'Z');
}

} // namespace

std::optional<std::string> llamaRulePattern(std::string_view name, std::string& why) {
    if (name.empty()) {
        why = "an empty name";
        return std::nullopt;
    }
    if (name.find('\0') != std::string_view::npos) {
        why = "a NUL byte in the name, which no ggml tensor name holds";
        return std::nullopt;
    }
    if (name.size() >= kGgmlMaxName) {
        why = "llama.cpp names are at most " + std::to_string(kGgmlMaxName - 1) + " bytes and this has " +
              std::to_string(name.size());
        return std::nullopt;
    }
    std::string out = "^";
    for (const unsigned char c : name) {
        if (lowerAlnum(c) || c == '_' || c == '-') {
            out += static_cast<char>(c);
        } else if (c == '.') {
            out += "\\.";
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out + "$";
}

bool isGgmlTypeName(std::string_view type) {
    const auto lower = [](std::string_view s) {
        std::string out(s);
        for (char& c : out)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        return out;
    };
    const std::string wanted = lower(type);
    for (std::uint32_t id = 0; id < 64; ++id) { // ggml's type ids, with room for new ones
        const std::string name = ggmlTypeName(id);
        if (name.rfind("id ", 0) != 0 && lower(name) == wanted) return true;
    }
    return false;
}

std::optional<std::string> yamlQuoted(std::string_view text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        char32_t c = 0;
        const std::size_t n = utf8At(text, i, c);
        if (n == 0) return std::nullopt;
        i += n;
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
        } else {
            char escape[12];
            if (c <= 0xFFFF)
                std::snprintf(escape, sizeof escape, "\\u%04X", static_cast<unsigned>(c));
            else
                std::snprintf(escape, sizeof escape, "\\U%08X", static_cast<unsigned>(c));
            out += escape;
        }
    }
    return out + "\"";
}

std::string compressorTarget(std::string_view name) {
    bool plain = true, dotted = false, capital = false;
    for (const unsigned char c : name) {
        plain = plain && (asciiAlnum(c) || c == '_' || c == '.');
        dotted = dotted || c == '.';
        capital = capital || (c >= 'A' && c <= 'Z');
    }
    // A dotted name is no class name; an undotted one in capitals could be ("Linear" matches every
    // nn.Linear), and a name with other characters could be read as a pattern.
    if (plain && !name.empty() && (dotted || !capital)) return std::string(name);
    std::string out = "re:";
    for (const unsigned char c : name) {
        if (c < 0x80 && !asciiAlnum(c) && c != '_') out += '\\'; // Python re: "\x" is x for any such x
        out += static_cast<char>(c);
    }
    return out + "\\Z";
}

} // namespace ql
