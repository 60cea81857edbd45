#include "analysis/code_diff.h"

#include "base/error.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ql {
namespace {

// Values that differ; two NaNs are the same stored value for this purpose.
template <typename T> std::int64_t differing(const std::vector<T>& a, const std::vector<T>& b) {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if constexpr (std::is_floating_point_v<T>)
            n += !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])));
        else
            n += a[i] != b[i];
    return n + static_cast<std::int64_t>(std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
}

} // namespace

CodeDiff compareCodes(const StoredQuantization& a, const StoredQuantization& b) {
    if (const std::string why = a.gridDifference(b); !why.empty())
        throw QuantError("codes not compared: " + a.format + " and " + b.format + ": " + why);
    CodeDiff d;
    d.formatA = a.format;
    d.formatB = b.format;
    d.compared = static_cast<std::int64_t>(a.codes.size());
    for (std::size_t i = 0; i < a.codes.size(); ++i) {
        const std::int64_t delta = std::llabs(std::int64_t{a.codes[i]} - std::int64_t{b.codes[i]});
        if (delta == 0) continue;
        if (d.mismatches++ == 0) d.firstMismatch = static_cast<std::int64_t>(i);
        d.maxDelta = std::max(d.maxDelta, delta);
    }
    d.scales = static_cast<std::int64_t>(a.scales.size());
    d.scaleMismatches = differing(a.scales, b.scales);
    d.zeroPointMismatches = differing(a.zeroPoints, b.zeroPoints);
    d.offsetMismatches = differing(a.offsets, b.offsets);
    return d;
}

nlohmann::json toJson(const CodeDiff& d) {
    return {{"format", d.formatA},
            {"format_b", d.formatB},
            {"compared", d.compared},
            {"code_mismatches", d.mismatches},
            {"max_code_diff", d.maxDelta},
            {"first_mismatch", d.firstMismatch},
            {"scales", d.scales},
            {"code_scale_mismatches", d.scaleMismatches},
            {"code_zero_point_mismatches", d.zeroPointMismatches},
            {"code_offset_mismatches", d.offsetMismatches}};
}

} // namespace ql
