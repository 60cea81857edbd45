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

void GroupClipping::merge(const GroupClipping& o) {
    count += o.count;
    clippedLow += o.clippedLow;
    clippedHigh += o.clippedHigh;
    flushedToZero += o.flushedToZero;
    clipErrorSq += o.clipErrorSq;
    roundErrorSq += o.roundErrorSq;
    sumSqX += o.sumSqX;
    maxAbsError = std::max(maxAbsError, o.maxAbsError);
}

ClippingStats::ClippingStats(std::vector<ClipEdges> edges, bool floatTarget)
    : m_edges(std::move(edges))
    , m_groups(m_edges.size())
    , m_float(floatTarget) {}

void ClippingStats::add(std::int64_t group, float xf, float xhatf) {
    const auto g = static_cast<std::size_t>(group);
    auto& s = m_groups[g];
    const auto& e = m_edges[g];
    const double x = xf;
    const double err = x - static_cast<double>(xhatf);
    ++s.count;
    s.sumSqX += x * x;
    s.maxAbsError = std::max(s.maxAbsError, std::fabs(err));
    const bool low = x < e.low - e.roundingSlack;
    const bool high = x > e.high + e.roundingSlack;
    s.clippedLow += low;
    s.clippedHigh += high;
    (low || high ? s.clipErrorSq : s.roundErrorSq) += err * err;
    if (m_float && x != 0.0 && xhatf == 0.0f) ++s.flushedToZero;
}

void ClippingStats::merge(const ClippingStats& o) {
    for (std::size_t g = 0; g < m_groups.size() && g < o.m_groups.size(); ++g) m_groups[g].merge(o.m_groups[g]);
}

GroupClipping ClippingStats::total() const {
    GroupClipping t;
    for (const auto& g : m_groups) t.merge(g);
    return t;
}

} // namespace ql
