#include "io/untrusted_json.h"

#include "base/error.h"

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

namespace ql {
namespace {

using json = nlohmann::json;

// What the parsed tree costs, in bytes, as nlohmann's json lays it out with the standard library's
// containers, measured with glibc's allocator: a value's own slot (16 bytes, half as much again
// in an array for the vector's growth), an object's map or an array's vector, a member's
// map node with its key, and a string's heap copy past the small-string buffer.
namespace tree_bytes {
constexpr std::uint64_t kArraySlot = 24, kObject = 64, kArray = 40, kMember = 96, kString = 48,
                        kShortString = 15;
constexpr std::uint64_t heapText(std::size_t length) {
    return length > kShortString ? length + 17 : 0;
}
} // namespace tree_bytes

// SAX events only: nlohmann's SAX parser keeps its own stack, so nothing here recurses.
class ShapeCheck : public json::json_sax_t {
public:
    ShapeCheck(int maxDepth, std::uint64_t maxTreeBytes)
        : m_max(maxDepth)
        , m_maxTree(maxTreeBytes) {}

    bool null() override { return value(0); }
    bool boolean(bool) override { return value(0); }
    bool number_integer(number_integer_t) override { return value(0); }
    bool number_unsigned(number_unsigned_t) override { return value(0); }
    bool number_float(number_float_t, const string_t&) override { return value(0); }
    bool string(string_t& s) override { return value(tree_bytes::kString + tree_bytes::heapText(s.size())); }
    bool binary(binary_t&) override { return value(0); }
    bool start_object(std::size_t) override { return open(false, tree_bytes::kObject); }
    bool key(string_t& k) override {
        if (m_levels.size() <= 2 && !m_levels.back().keys.insert(k).second) {
            problem =
                "names '" + shortened(k) + "' twice" + (m_levels.size() == 2 ? " inside one entry" : "");
            return false;
        }
        return grow(tree_bytes::kMember + tree_bytes::heapText(k.size()));
    }
    bool end_object() override {
        m_levels.pop_back();
        return true;
    }
    bool start_array(std::size_t) override { return open(true, tree_bytes::kArray); }
    bool end_array() override { return end_object(); }
    bool parse_error(std::size_t, const std::string&, const json::exception&) override { return false; }

    std::string problem;

private:
    // A container opens one level deeper: its own cost, and the depth bound.
    bool open(bool array, std::uint64_t bytes) {
        if (!value(bytes)) return false;
        m_levels.push_back({array, {}});
        if (static_cast<int>(m_levels.size()) <= m_max) return true;
        problem = "nests deeper than " + std::to_string(m_max) + " levels";
        return false;
    }
    // A value met: its slot (an object member's is in its node), and `extra` for what it holds.
    bool value(std::uint64_t extra) {
        return grow(extra + (m_levels.empty() || m_levels.back().array ? tree_bytes::kArraySlot : 0));
    }
    bool grow(std::uint64_t bytes) {
        m_tree += bytes;
        if (m_tree <= m_maxTree) return true;
        problem = "would take more than " +
                  (m_maxTree >= (1u << 20) ? std::to_string(m_maxTree >> 20) + " MiB"
                                           : std::to_string(m_maxTree >> 10) + " KiB") +
                  " of memory once parsed (that many values); refused";
        return false;
    }
    static std::string shortened(const std::string& k) {
        return k.size() > 200 ? k.substr(0, 200) + "..." : k;
    }

    // One per open container: whether it is an array, and (the top two levels) the keys seen.
    struct Level {
        bool array;
        std::unordered_set<std::string> keys;
    };
    int m_max;
    std::uint64_t m_maxTree;
    std::uint64_t m_tree = 0;
    std::vector<Level> m_levels;
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

bool isValidUtf8(std::string_view text) {
    try {
        (void)nlohmann::json(std::string(text)).dump();
        return true;
    } catch (const nlohmann::json::type_error&) {
        return false;
    }
}

void checkJsonShape(std::string_view text, const std::string& file, const std::string& what, int maxDepth,
                    std::uint64_t maxTreeBytes) {
    ShapeCheck check(maxDepth, maxTreeBytes);
    try {
        json::sax_parse(text.begin(), text.end(), &check);
    } catch (const json::exception&) { // malformed: the real parse says how
    }
    if (!check.problem.empty()) throw FileError(file + ": " + what + " " + check.problem);
}

} // namespace ql
