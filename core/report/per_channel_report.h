#pragma once
// A report entry's "per_channel" object: each group's scale, zero point and clipping row, as columns.
// One list of the columns, given to two writers: a JSON tree (toJson, reportJson) and the text a
// report file holds, written straight from the rows (a 4096-row tensor has some fifty thousand
// numbers: building and printing a tree of them cost more than the rest of the report).
#include "report/report.h"

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace ql {

/// The members of a JSON object appended to `out` as nlohmann::json's dump with an indent of one
/// prints them, the object's closing brace indented by `depth`: key(k) opens a member, whose value
/// the caller appends (at that depth), and close() ends the object. Keys must come in the library's
/// sorted order (a key out of order is a logic error: the text would differ from the tree's dump).
class JsonObjectText {
public:
    JsonObjectText(std::string& out, int depth);
    void key(const std::string& k);
    void close();

private:
    std::string& m_out;
    int m_depth;
    std::string m_last;
    bool m_first = true;
};

/// The "per_channel" object as a tree.
nlohmann::json perChannelJson(const TensorReport& r, const ReportOptions& opt);

/// Takes the next piece of a text in order (a report file's writer).
using TextPut = std::function<void(std::string_view)>;

/// The same object appended to `out` as nlohmann::json's dump with an indent of one prints it as the
/// value of a member `depth` levels deep (its closing brace indented by `depth`), byte for byte. Given
/// `put`, each column goes to it instead, after what `out` holds then (which it clears): the same text
/// in order, `out` holding its end.
void appendPerChannelText(std::string& out, const TensorReport& r, const ReportOptions& opt, int depth,
                          const TextPut* put = nullptr);

} // namespace ql
