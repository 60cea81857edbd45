#pragma once
// llama-quantize's reading of a --tensor-type-file, for checking the rules QuantLens writes: the file
// is whitespace-separated tokens (`file >> arg`, tools/quantize/quantize.cpp), each split at its first
// '=' into a name, lower-cased, and a type; a token without '=' or with an empty name or type makes
// llama-quantize stop. Per tensor (src/llama-quant.cpp) each name is std::regex_search'ed in the
// tensor's name and the first that matches gives the type.
#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace qltest {

struct LlamaRules {
    std::vector<std::pair<std::regex, std::string>> rules;
    std::vector<std::string> malformed; // tokens llama-quantize would refuse

    explicit LlamaRules(const std::string& text) {
        std::istringstream in(text);
        for (std::string token; in >> token;) {
            const auto eq = token.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == token.size()) {
                malformed.push_back(token);
                continue;
            }
            std::string name = token.substr(0, eq);
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            rules.emplace_back(std::regex(name), token.substr(eq + 1));
        }
    }
    /// The type the rules give `tensor`, or "" when none matches.
    std::string typeOf(const std::string& tensor) const {
        for (const auto& [re, type] : rules)
            if (std::regex_search(tensor, re)) return type;
        return {};
    }
};

} // namespace qltest
