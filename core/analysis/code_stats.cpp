#include "analysis/code_stats.h"

#include <cmath>

namespace ql {
namespace {

bool isWide(Target t) {
    return t == Target::Int32;
}
constexpr int kOffset = 128; // int8 codes are -128..127, uint8 and raw fp bits 0..255

} // namespace

CodeStats::CodeStats(Target target)
    : m_target(target) {
    if (!isWide(target)) m_small.assign(256 + kOffset, 0);
}

void CodeStats::add(std::int32_t code, std::int64_t n) {
    m_total += n;
    if (isWide(m_target))
        m_wide[code] += n;
    else
        m_small[static_cast<std::size_t>(std::int64_t{code} + kOffset)] += n;
}

void CodeStats::add(const Codes& codes, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
        add(codes.at(i));
}

void CodeStats::merge(const CodeStats& o) {
    m_total += o.m_total;
    for (std::size_t i = 0; i < m_small.size() && i < o.m_small.size(); ++i)
        m_small[i] += o.m_small[i];
    for (const auto& [code, n] : o.m_wide)
        m_wide[code] += n;
}

double CodeStats::possibleCodes() const {
    if (isWide(m_target)) return 4294967296.0;
    return isSubByte(m_target) ? 16.0 : 256.0;
}

std::int64_t CodeStats::codesUsed() const {
    std::int64_t used = static_cast<std::int64_t>(m_wide.size());
    for (auto n : m_small)
        used += n > 0;
    return used;
}

std::vector<std::pair<std::int32_t, std::int64_t>> CodeStats::counts() const {
    std::vector<std::pair<std::int32_t, std::int64_t>> out;
    for (std::size_t i = 0; i < m_small.size(); ++i)
        if (m_small[i]) out.emplace_back(static_cast<std::int32_t>(i) - kOffset, m_small[i]);
    for (const auto& [code, n] : m_wide)
        out.emplace_back(code, n);
    return out;
}

double CodeStats::entropyBits() const {
    if (m_total == 0) return 0.0;
    double h = 0.0;
    const double total = static_cast<double>(m_total);
    for (const auto& [code, n] : counts()) {
        const double p = static_cast<double>(n) / total;
        h -= p * std::log2(p);
    }
    return h == 0.0 ? 0.0 : h; // no "-0"
}

} // namespace ql
