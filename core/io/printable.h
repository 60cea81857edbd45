#pragma once
// One rule for showing text a file supplied — a tensor name, a metadata key, an external-data
// location, an importance entry, a report's error — wherever it is printed or quoted in a message:
// nothing in it can drive a terminal, break a line, reorder what is shown around it, or be taken
// by the next reader (a CI log, an XML parser) for something other than the text itself.
#include <cstddef>
#include <string>
#include <string_view>

namespace ql {

/// `text` with each of these written as a visible escape: C0 controls (\n, \r, \t, else \xNN), DEL
/// (\x7F), C1 controls (\u0085), line and paragraph separators (\u2028, \u2029), bidirectional and
/// invisible formatting (U+061C, U+200B-U+200F, U+202A-U+202E, U+2060-U+206F, U+FEFF, U+FFF9-U+FFFB),
/// non-characters (\uFFFE, \U0010FFFF...) and every byte that is not part of well-formed UTF-8
/// (\xNN). Everything else is kept as it is, other UTF-8 and backslashes included, so that
/// printable(printable(s)) == printable(s): a message built from escaped parts may pass through
/// once more where it is printed.
std::string printable(std::string_view text);

/// Whether printable(text) differs from `text`.
bool needsEscaping(std::string_view text);

/// The code point of the well-formed UTF-8 sequence that starts at text[at] and its length in
/// bytes; 0 when none starts there (a stray continuation byte, an overlong form, a surrogate, past
/// U+10FFFF, or cut short).
std::size_t utf8At(std::string_view text, std::size_t at, char32_t& codePoint);

} // namespace ql
