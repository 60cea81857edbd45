#include "analysis/histogram.h"

#include "base/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace ql {

Histogram::Histogram(double lo, double hi, int bins, Scale scale)
    : m_lo(lo)
    , m_hi(hi)
    , m_scale(scale)
    , m_counts(static_cast<std::size_t>(std::max(bins, 1)), 0) {
    if (!(m_hi > m_lo)) {
        // One value everywhere (a constant tensor): centre a unit-wide range on it.
        const double w = scale == Scale::Log10 ? 2.0 : (m_lo == 0.0 ? 1.0 : std::fabs(m_lo));
        m_lo = scale == Scale::Log10 ? m_lo / 10.0 : m_lo - w / 2;
        m_hi = scale == Scale::Log10 ? (m_hi > 0 ? m_hi * 10.0 : 1.0) : m_hi + w / 2;
        if (scale == Scale::Log10 && !(m_lo > 0)) m_lo = m_hi / 100.0;
    }
    const double a = scale == Scale::Log10 ? std::log10(m_lo) : m_lo;
    const double b = scale == Scale::Log10 ? std::log10(m_hi) : m_hi;
    m_a = a;
    m_width = b - a;
    m_b = static_cast<double>(m_counts.size()) / m_width;
    m_step = m_width / static_cast<double>(m_counts.size());
    if (scale == Scale::Log10) {
        m_edgeV.resize(m_counts.size() + 1);
        for (std::size_t i = 0; i < m_edgeV.size(); ++i)
            m_edgeV[i] = std::pow(10.0, static_cast<double>(i) * m_step + m_a);
        m_edgeV.front() = m_lo;
        m_edgeV.back() = m_hi;
    }
}

void Histogram::merge(const Histogram& o) {
    if (o.m_lo != m_lo || o.m_hi != m_hi || o.m_scale != m_scale || o.m_counts.size() != m_counts.size())
        throw QuantError("histograms with different bins cannot be merged");
    for (std::size_t i = 0; i < m_counts.size(); ++i)
        m_counts[i] += o.m_counts[i];
    m_under += o.m_under;
    m_over += o.m_over;
    m_nan += o.m_nan;
}

void Histogram::addCounts(std::span<const std::int64_t> bins, std::int64_t under, std::int64_t over,
                          std::int64_t nan) {
    if (bins.size() != m_counts.size())
        throw QuantError("histogram counts for " + std::to_string(bins.size()) + " bins added to one of " +
                         std::to_string(m_counts.size()));
    for (std::size_t i = 0; i < m_counts.size(); ++i)
        m_counts[i] += bins[i];
    m_under += under;
    m_over += over;
    m_nan += nan;
}

std::vector<double> Histogram::edges() const {
    std::vector<double> e(m_counts.size() + 1);
    for (std::size_t i = 0; i < e.size(); ++i) {
        e[i] = m_scale == Scale::Log10 ? m_edgeV[i] : static_cast<double>(i) * m_step + m_a;
    }
    e.front() = m_lo;
    e.back() = m_hi;
    return e;
}

std::int64_t Histogram::total() const {
    return std::accumulate(m_counts.begin(), m_counts.end(), std::int64_t{0}) + m_under + m_over + m_nan;
}

Histogram valueHistogram(std::span<const float> values, int bins) {
    float lo = std::numeric_limits<float>::infinity();
    float hi = -lo;
    for (float v : values)
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    Histogram h = lo <= hi ? Histogram(lo, hi, bins) : Histogram(0, 1, bins);
    for (float v : values)
        h.add(v);
    return h;
}

} // namespace ql
