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
    return m_finite ? m_sumSqErr / static_cast<double>(m_finite) : kNaN;
}
double ErrorStats::rmse() const {
    return std::sqrt(mse());
}
double ErrorStats::signalPower() const {
    return m_finite ? m_sumSqX / static_cast<double>(m_finite) : kNaN;
}
double ErrorStats::maxAbsError() const {
    return m_finite ? m_maxAbsErr : kNaN;
}
double ErrorStats::meanAbsError() const {
    return m_finite ? m_sumAbsErr / static_cast<double>(m_finite) : kNaN;
}

double ErrorStats::sqnrDb() const {
    if (!m_finite) return kNaN;
    if (m_sumSqErr == 0.0) return kInf;
    if (m_sumSqX == 0.0) return -kInf;
    // 20·log10(‖x‖/‖e‖) = 10·log10(Σx²/Σe²)
    return 10.0 * std::log10(m_sumSqX / m_sumSqErr);
}

double ErrorStats::relError() const {
    if (!m_finite) return kNaN;
    if (m_sumSqErr == 0.0) return 0.0;
    if (m_sumSqX == 0.0) return kInf;
    return std::sqrt(m_sumSqErr / m_sumSqX);
}

double ErrorStats::cosine() const {
    if (!m_finite) return kNaN;
    if (m_sumSqX == 0.0 && m_sumSqXhat == 0.0) return 1.0;
    if (m_sumSqX == 0.0 || m_sumSqXhat == 0.0) return 0.0;
    return m_sumDot / (std::sqrt(m_sumSqX) * std::sqrt(m_sumSqXhat));
}

double ErrorStats::ratioOver1e3() const {
    return m_finite ? static_cast<double>(m_over1e3) / static_cast<double>(m_finite) : kNaN;
}
double ErrorStats::ratioOver5e3() const {
    return m_finite ? static_cast<double>(m_over5e3) / static_cast<double>(m_finite) : kNaN;
}

} // namespace ql
