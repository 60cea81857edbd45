#pragma once
// "Did you mean": the closest of a list of names to what a user typed.
#include <string>
#include <vector>

namespace ql {

/// Up to `limit` candidates within a small edit distance of `typed` (closest first, then in list
/// order); empty when nothing is close. Case differences cost less than other edits.
std::vector<std::string> closestNames(const std::string& typed, const std::vector<std::string>& candidates,
                                      std::size_t limit = 3);
/// " (did you mean 'a' or 'b'?)", or "" when nothing is close.
std::string didYouMean(const std::string& typed, const std::vector<std::string>& candidates);

} // namespace ql
