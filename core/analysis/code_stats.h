#pragma once
// Which codes a result uses: how many of the target's codes occur, and their entropy in bits
// (the effective bits per element an ideal entropy coder would need).
#include "quant/params.h"

#include <cstdint>
#include <map>
#include <vector>

namespace ql {

class CodeStats {
public:
    CodeStats() = default;
    explicit CodeStats(Target target);

    void add(std::int32_t code, std::int64_t n = 1);
    void add(const Codes& codes, std::int64_t begin, std::int64_t end);
    void merge(const CodeStats& other);

    Target target() const { return m_target; }
    /// 2^bits: 256 for 8-bit targets, 16 for 4-bit, 2^32 for int32.
    double possibleCodes() const;
    std::int64_t codesUsed() const;
    std::int64_t total() const { return m_total; }
    /// Shannon entropy of the code distribution in bits (0 for an empty or one-code result).
    double entropyBits() const;
    /// (code, count) for every code that occurs, ascending by code (raw bits for fp targets).
    std::vector<std::pair<std::int32_t, std::int64_t>> counts() const;

private:
    Target m_target = Target::Int8;
    std::vector<std::int64_t> m_small;           // 8-bit and smaller: indexed by code + 128
    std::map<std::int32_t, std::int64_t> m_wide; // int32 codes
    std::int64_t m_total = 0;
};

} // namespace ql
