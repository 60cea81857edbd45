#include "io/json_shape.h"

#include "tensor/error.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

namespace ql {
namespace {

using json = nlohmann::json;

// SAX events only: nlohmann's SAX parser keeps its own stack, so nothing here recurses.
class ShapeCheck : public json::json_sax_t {
public:
    explicit ShapeCheck(int maxDepth)
        : m_max(maxDepth) {}

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
        m_keys.emplace_back();
        return enter();
    }
    bool key(string_t& k) override {
        if (m_keys.size() <= 2 && !m_keys.back().insert(k).second) {
            problem = "names '" + shortened(k) + "' twice" + (m_keys.size() == 2 ? " inside one entry" : "");
            return false;
        }
        return true;
    }
    bool end_object() override {
        m_keys.pop_back();
        --m_depth;
        return true;
    }
    bool start_array(std::size_t) override {
        m_keys.emplace_back(); // keeps m_keys.size() equal to the depth
        return enter();
    }
    bool end_array() override { return end_object(); }
    bool parse_error(std::size_t, const std::string&, const json::exception&) override { return false; }

    std::string problem;

private:
    bool enter() {
        if (++m_depth <= m_max) return true;
        problem = "nests deeper than " + std::to_string(m_max) + " levels";
        return false;
    }
    static std::string shortened(const std::string& k) {
        return k.size() > 200 ? k.substr(0, 200) + "..." : k;
    }

    int m_max;
    int m_depth = 0;
    std::vector<std::unordered_set<std::string>> m_keys;
};

} // namespace

bool hasControlCharacter(std::string_view n, bool allowLineBreaks) {
    for (std::size_t i = 0; i < n.size(); ++i) {
        const auto c = static_cast<unsigned char>(n[i]);
        const auto next = i + 1 < n.size() ? static_cast<unsigned char>(n[i + 1]) : 0;
        if (allowLineBreaks && (c == '\n' || c == '\t')) continue;
        if (c < 0x20 || c == 0x7F || (c == 0xC2 && next >= 0x80 && next <= 0x9F)) return true;
    }
    return false;
}

std::string escapedName(std::string_view name) {
    std::string out;
    for (const unsigned char k : name) {
        if (k >= 0x20 && k < 0x7F) {
            out += static_cast<char>(k);
            continue;
        }
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02X", k);
        out += hex;
    }
    return out;
}

bool isValidUtf8(std::string_view text) {
    try {
        (void)nlohmann::json(std::string(text)).dump();
        return true;
    } catch (const nlohmann::json::type_error&) {
        return false;
    }
}

void checkJsonShape(std::string_view text, const std::string& file, const std::string& what, int maxDepth) {
    ShapeCheck check(maxDepth);
    try {
        json::sax_parse(text.begin(), text.end(), &check);
    } catch (const json::exception&) { // malformed: the real parse says how
    }
    if (!check.problem.empty()) throw FileError(file + ": " + what + " " + check.problem);
}

} // namespace ql
