#pragma once
// std::string <-> QString and number formatting shared by the pages.
#include "base/byte_size.h"

#include <QString>
#include <cmath>
#include <string>
#include <string_view>

namespace ql {

inline QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}
inline std::string ss(const QString& s) {
    return s.toStdString();
}

/// A metric for display: "—" for NaN, "∞" for infinities, else `digits` significant digits.
inline QString fmtNumber(double v, int digits = 4) {
    if (std::isnan(v)) return QStringLiteral("—");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
    return QString::number(v, 'g', digits);
}

/// Text that quotes a file (a tensor name, a reason naming one) as a tooltip. Qt reads a tooltip that
/// looks like markup as HTML, where an <img> in a name would load a file: so it is escaped, and
/// marked as rich text that keeps its line breaks.
inline QString plainToolTip(const QString& text) {
    return QStringLiteral("<p style='white-space:pre-wrap'>") + text.toHtmlEscaped() + QStringLiteral("</p>");
}

/// "1.5 MB" style byte counts (core's byteSizeText).
inline QString fmtBytes(double bytes) {
    return QString::fromStdString(byteSizeText(bytes));
}

} // namespace ql
