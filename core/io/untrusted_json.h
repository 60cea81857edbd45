#pragma once
// A linear, non-recursive look at untrusted JSON before it is parsed into a tree: nesting depth
// (a tree that deep would overflow the stack when printed or destroyed) and duplicate keys (which
// nlohmann's parser would silently resolve to the last one, where the reference readers refuse), and
// the memory the tree would take.
#include <cstdint>
#include <string>
#include <string_view>

namespace ql {

/// The memory a parsed JSON text (a header, an index, a journal line) may take unless its reader
/// says otherwise.
inline constexpr std::uint64_t kMaxJsonTreeBytes = 512ULL << 20;

/// Throws FileError "<file>: <what> ..." when the text nests deeper than `maxDepth`, when an object
/// at depth 1 or 2 (the top level and the objects it holds) names a key twice, or when its tree
/// would take more than `maxTreeBytes` of memory (a few bytes of text can cost a hundred: "{}," is a
/// map). Malformed JSON passes: the real parse reports it.
void checkJsonShape(std::string_view text, const std::string& file, const std::string& what,
                    int maxDepth = 32, std::uint64_t maxTreeBytes = kMaxJsonTreeBytes);

/// Whether text from a file holds a control character (C0, DEL, or C1 as UTF-8: U+0080 to U+009F):
/// it would reach terminals and tables as it is, and an escape sequence in it could rewrite the
/// screen. No real name has one; `allowLineBreaks` lets a message's newlines and tabs through.
bool hasControlCharacter(std::string_view text, bool allowLineBreaks = false);

/// Whether `text` is well-formed UTF-8, as a JSON document (a safetensors header, a report) needs
/// its strings to be.
bool isValidUtf8(std::string_view text);

} // namespace ql
