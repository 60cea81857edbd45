#include "analysis/clipping.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ql {

double GroupClipping::clippedFraction() const {
    return count ? static_cast<double>(clippedLow + clippedHigh) / static_cast<double>(count) : 0.0;
}

double GroupClipping::sqnrDb() const {
    const double err = clipErrorSq + roundErrorSq;
    if (!count) return std::numeric_limits<double>::quiet_NaN();
    if (err == 0.0) return std::numeric_limits<double>::infinity();
    if (sumSqX == 0.0) return -std::numeric_limits<double>::infinity();
    return 10.0 * std::log10(sumSqX / err);
}

ClippingStats::ClippingStats(std::size_t rows, std::size_t groupCount, bool floatTarget)
    : m_groups(rows)
    , m_float(floatTarget)
    , m_groupCount(groupCount) {}

GroupClipping ClippingStats::total() const {
    if (m_hasTotal) return m_total;
    GroupClipping t;
    for (const auto& g : m_groups)
        t.merge(g);
    return t;
}

} // namespace ql
