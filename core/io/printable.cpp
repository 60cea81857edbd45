#include "io/printable.h"

#include <cstdio>

namespace ql {
namespace {

// Code points shown as escapes: they control, break lines, reorder or hide text, or are no
// characters at all (XML 1.0 refuses U+FFFE and U+FFFF even as references).
bool escaped(char32_t c) {
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return true; // C0, DEL, C1
    if (c == 0x061C) return true;                          // Arabic letter mark
    if (c >= 0x200B && c <= 0x200F) return true;           // zero-width space/joiners, LRM, RLM
    if (c >= 0x2028 && c <= 0x202E) return true;           // line/paragraph separator, embeddings
    if (c >= 0x2060 && c <= 0x206F) return true;           // word joiner, isolates, deprecated formats
    if (c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB)) return true;
    return (c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE; // non-characters
}

void appendEscape(std::string& out, char32_t c, bool byte) {
    char text[12];
    if (byte || c < 0x80) {
        switch (c) {
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\t':
            out += "\\t";
            return;
        default:
            std::snprintf(text, sizeof text, "\\x%02X", static_cast<unsigned>(c));
        }
    } else if (c <= 0xFFFF) {
        std::snprintf(text, sizeof text, "\\u%04X", static_cast<unsigned>(c));
    } else {
        std::snprintf(text, sizeof text, "\\U%08X", static_cast<unsigned>(c));
    }
    out += text;
}

} // namespace

std::size_t utf8At(std::string_view text, std::size_t at, char32_t& codePoint) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) {
        codePoint = lead;
        return 1;
    }
    std::size_t n;
    char32_t c, min;
    if (lead >= 0xC2 && lead <= 0xDF)
        n = 2, c = lead & 0x1F, min = 0x80;
    else if (lead >= 0xE0 && lead <= 0xEF)
        n = 3, c = lead & 0x0F, min = 0x800;
    else if (lead >= 0xF0 && lead <= 0xF4)
        n = 4, c = lead & 0x07, min = 0x10000;
    else
        return 0;
    if (text.size() - at < n) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(k) & 0xC0) != 0x80) return 0;
        c = (c << 6) | (byte(k) & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    codePoint = c;
    return n;
}

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t c = 0;
        const std::size_t n = utf8At(text, i, c);
        if (n == 0) {
            appendEscape(out, static_cast<unsigned char>(text[i]), true);
            ++i;
            continue;
        }
        if (escaped(c))
            appendEscape(out, c, false);
        else
            out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

bool needsEscaping(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        char32_t c = 0;
        const std::size_t n = utf8At(text, i, c);
        if (n == 0 || escaped(c)) return true;
        i += n;
    }
    return false;
}

} // namespace ql
