#include "base/suggest.h"

#include <algorithm>
#include <cctype>

namespace ql {
namespace {

constexpr std::size_t kMaxCompared = 256; // longer names are not compared (quadratic cost)

// Levenshtein distance in tenths: a change of case only costs 1, any other edit 10.
std::size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = 10 * j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = 10 * i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const char x = a[i - 1], y = b[j - 1];
            const std::size_t swap = x == y ? 0
                                            : (std::tolower(static_cast<unsigned char>(x)) ==
                                                       std::tolower(static_cast<unsigned char>(y))
                                                   ? 1
                                                   : 10);
            cur[j] = std::min({prev[j] + 10, cur[j - 1] + 10, prev[j - 1] + swap});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

} // namespace

std::vector<std::string> closestNames(const std::string& typed, const std::vector<std::string>& candidates,
                                      std::size_t limit) {
    if (typed.size() > kMaxCompared) return {};
    // Close: at most a third of the typed length in edits (and at least one edit allowed).
    const std::size_t budget = 10 * std::max<std::size_t>(1, typed.size() / 3);
    std::vector<std::pair<std::size_t, std::size_t>> hits; // distance, index
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        const std::string& c = candidates[k];
        if (c.size() > kMaxCompared || c.size() > typed.size() + budget / 10 + 1 ||
            c.size() + budget / 10 + 1 < typed.size())
            continue;
        if (const std::size_t d = distance(typed, c); d <= budget) hits.emplace_back(d, k);
    }
    std::stable_sort(hits.begin(), hits.end(),
                     [](const auto& l, const auto& r) { return l.first < r.first; });
    std::vector<std::string> out;
    for (std::size_t k = 0; k < hits.size() && out.size() < limit; ++k)
        out.push_back(candidates[hits[k].second]);
    return out;
}

std::string didYouMean(const std::string& typed, const std::vector<std::string>& candidates) {
    const auto close = closestNames(typed, candidates);
    if (close.empty()) return {};
    std::string s = " (did you mean ";
    for (std::size_t k = 0; k < close.size(); ++k)
        s += (k == 0 ? "'" : (k + 1 == close.size() ? "' or '" : "', '")) + close[k];
    return s + "'?)";
}

} // namespace ql
