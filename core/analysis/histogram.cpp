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
    if (scale == Scale::Octaves) throw QuantError("octave bins are made by Histogram::octaves");
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

Histogram Histogram::octaves(int lowExponent, int octaves, int perOctave) {
    const int top = lowExponent + octaves;
    if (octaves < 1 || perOctave < 1 || perOctave > BinRule::kMostPerOctave ||
        (perOctave & (perOctave - 1)) != 0 || lowExponent < std::numeric_limits<double>::min_exponent - 1 ||
        top > std::numeric_limits<double>::max_exponent - 1)
        throw QuantError("octave bins 2^" + std::to_string(lowExponent) + " .. 2^" + std::to_string(top) +
                         ", " + std::to_string(perOctave) + " per octave, are out of range");
    Histogram h(std::ldexp(1.0, lowExponent), std::ldexp(1.0, top), octaves * perOctave);
    h.m_scale = Scale::Octaves;
    h.m_lowExponent = lowExponent;
    h.m_perOctave = perOctave;
    return h;
}

std::optional<Histogram> Histogram::octavesOver(double lo, double hi, int bins) {
    if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return std::nullopt;
    const int low = std::ilogb(lo), top = std::ilogb(hi);
    if (std::ldexp(1.0, low) != lo || std::ldexp(1.0, top) != hi || bins % (top - low) != 0)
        return std::nullopt;
    try {
        return octaves(low, top - low, bins / (top - low));
    } catch (const QuantError&) {
        return std::nullopt;
    }
}

Histogram Histogram::alignedLinear(std::int64_t firstEdge, int widthExponent, int bins) {
    const double half = std::ldexp(1.0, widthExponent - 1);
    const double lo = static_cast<double>(firstEdge) * half;
    const double hi = static_cast<double>(firstEdge + 2 * std::int64_t{std::max(bins, 1)}) * half;
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(half > 0) ||
        std::fabs(static_cast<double>(firstEdge)) > 0x1p52)
        throw QuantError("linear bins of width 2^" + std::to_string(widthExponent) + " from " +
                         std::to_string(firstEdge) + " half widths are out of range");
    return {lo, hi, bins};
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
        const auto j = static_cast<int>(i);
        e[i] = m_scale == Scale::Log10 ? m_edgeV[i]
               : m_scale == Scale::Octaves
                   ? std::ldexp(1.0 + static_cast<double>(j % m_perOctave) / m_perOctave,
                                m_lowExponent + j / m_perOctave)
                   : static_cast<double>(i) * m_step + m_a;
    }
    e.front() = m_lo;
    e.back() = m_hi;
    return e;
}

std::int64_t Histogram::total() const {
    return std::accumulate(m_counts.begin(), m_counts.end(), std::int64_t{0}) + m_under + m_over + m_nan;
}

const char* scaleName(Histogram::Scale scale) {
    switch (scale) {
    case Histogram::Scale::Log10:
        return "log10";
    case Histogram::Scale::Octaves:
        return "octaves";
    case Histogram::Scale::Linear:
        break;
    }
    return "linear";
}

bool scaleNamed(const std::string& name, Histogram::Scale& scale) {
    for (const auto s : {Histogram::Scale::Linear, Histogram::Scale::Log10, Histogram::Scale::Octaves})
        if (name == scaleName(s)) {
            scale = s;
            return true;
        }
    return false;
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
