#include "analysis/error_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ql {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

void ErrorStats::add(std::span<const float> x, std::span<const float> xhat, std::int64_t firstIndex) {
    const std::size_t n = std::min(x.size(), xhat.size());
    for (std::size_t i = 0; i < n; ++i)
        addElement(x[i], xhat[i], firstIndex + static_cast<std::int64_t>(i));
}

double ErrorStats::mse() const {
    return m_s.finite ? m_s.sumSqErr / static_cast<double>(m_s.finite) : kNaN;
}
double ErrorStats::rmse() const {
    return std::sqrt(mse());
}
double ErrorStats::signalPower() const {
    return m_s.finite ? m_s.sumSqX / static_cast<double>(m_s.finite) : kNaN;
}
double ErrorStats::maxAbsError() const {
    return m_s.finite ? m_s.maxAbsErr : kNaN;
}
double ErrorStats::meanAbsError() const {
    return m_s.finite ? m_s.sumAbsErr / static_cast<double>(m_s.finite) : kNaN;
}

double ErrorStats::sqnrDb() const {
    if (!m_s.finite) return kNaN;
    if (m_s.sumSqErr == 0.0) return kInf;
    if (m_s.sumSqX == 0.0) return -kInf;
    // 20·log10(‖x‖/‖e‖) = 10·log10(Σx²/Σe²)
    return 10.0 * std::log10(m_s.sumSqX / m_s.sumSqErr);
}

double ErrorStats::relError() const {
    if (!m_s.finite) return kNaN;
    if (m_s.sumSqErr == 0.0) return 0.0;
    if (m_s.sumSqX == 0.0) return kInf;
    return std::sqrt(m_s.sumSqErr / m_s.sumSqX);
}

double ErrorStats::cosine() const {
    if (!m_s.finite) return kNaN;
    if (m_s.sumSqX == 0.0 && m_s.sumSqXhat == 0.0) return 1.0;
    if (m_s.sumSqX == 0.0 || m_s.sumSqXhat == 0.0) return 0.0;
    return m_s.sumDot / (std::sqrt(m_s.sumSqX) * std::sqrt(m_s.sumSqXhat));
}

double ErrorStats::ratioOver1e3() const {
    return m_s.finite ? static_cast<double>(m_s.over1e3) / static_cast<double>(m_s.finite) : kNaN;
}
double ErrorStats::ratioOver5e3() const {
    return m_s.finite ? static_cast<double>(m_s.over5e3) / static_cast<double>(m_s.finite) : kNaN;
}

} // namespace ql
