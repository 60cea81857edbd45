#pragma once
// How a plan writes a tensor's or module's name where another program reads it back: the name must
// come back as itself, matching that one tensor, whatever bytes it holds (a crafted file can name a
// weight "a=q8_0 attn=q2_k b.weight", or put a line break in it).
#include <optional>
#include <string>
#include <string_view>

namespace ql {

/// llama-quantize --tensor-type-file reads whitespace-separated NAME=TYPE tokens, split at the
/// first '=', NAME lower-cased and then searched as a std::regex (ECMAScript) in each tensor name,
/// the first match winning. The pattern returned matches `name` and no other: anchored, with every
/// byte but [a-z0-9_-] escaped (\. or \xNN), so it holds no whitespace, no '=' and no capital the
/// lower-casing would change. nullopt, with `why` set, when no tensor llama.cpp loads can have the
/// name (empty, a NUL byte, longer than 63 bytes): a rule for it could only match another.
std::optional<std::string> llamaRulePattern(std::string_view name, std::string& why);

/// Whether llama-quantize takes `type` as a ggml type name (case-insensitively, as it compares).
bool isGgmlTypeName(std::string_view type);

/// A YAML double-quoted scalar that reads back as `text`: printable ASCII kept ('"' and '\' escaped),
/// every other code point as \uXXXX or \UXXXXXXXX, so the text is ASCII and no line break a YAML
/// reader knows (\r, \n, U+0085, U+2028, U+2029) can end a comment or a line. nullopt when `text` is
/// not UTF-8: no YAML string holds it.
std::optional<std::string> yamlQuoted(std::string_view text);

/// An llm-compressor target (or ignore entry) that selects the module `name` and nothing else. A
/// plain target matches a module name exactly or any module of a class of that name, and one that
/// starts with "re:" is a regular expression (Python re.match): a dotted lower-case name is written
/// as it is, any other as "re:" + the name escaped + "\Z".
std::string compressorTarget(std::string_view name);

} // namespace ql
