#include "widgets/name_elision.h"

#include <QApplication>
#include <QFontMetrics>
#include <QStyle>

namespace ql {

QString elideName(const QString& name, const QFontMetrics& metrics, int width) {
    if (metrics.horizontalAdvance(name) <= width) return name;
    const QString ellipsis = QStringLiteral("…");
    const int room = width - metrics.horizontalAdvance(ellipsis);
    // The tail: whole parts from the end while they fit, each starting at its separator.
    qsizetype cut = name.size();
    for (qsizetype i = name.size() - 1; i > 0; --i) {
        const QChar c = name[i];
        if (c != QLatin1Char('/') && c != QLatin1Char('.') && c != QLatin1Char(':')) continue;
        if (metrics.horizontalAdvance(name.mid(i)) > room) break;
        cut = i;
    }
    if (cut == name.size()) // not even the last part fits: keep its end
        return metrics.elidedText(name, Qt::ElideLeft, width);
    const QString tail = name.mid(cut);
    // Before the tail, the start of the part it could not take whole: where names are told apart
    // ("If_1_…" from "If_2_…", "layers" > "12"), more often than in the parts before it, which are
    // dropped first ("…/If_1_th…/weight"). A first part is shown from its start.
    qsizetype partStart = cut - 1;
    while (partStart > 0 && name[partStart - 1] != QLatin1Char('/') &&
           name[partStart - 1] != QLatin1Char('.') && name[partStart - 1] != QLatin1Char(':'))
        --partStart;
    const QString lead = partStart > 0 ? ellipsis + name[partStart - 1] : QString();
    const int partRoom = room - metrics.horizontalAdvance(tail) - metrics.horizontalAdvance(lead);
    QString part;
    for (qsizetype n = 1; partStart + n < cut; ++n) {
        if (metrics.horizontalAdvance(name.mid(partStart, n)) > partRoom) break;
        part = name.mid(partStart, n);
    }
    // Widths do not quite add up (kerning across the joins): shortened until the whole fits.
    while (part.size() >= 2 && metrics.horizontalAdvance(lead + part + ellipsis + tail) > width)
        part.chop(1);
    if (part.size() < 2) return ellipsis + tail; // no room to tell anything: the tail alone
    return lead + part + ellipsis + tail;
}

QString NameElisionDelegate::shownText(const QString& name, const QStyleOptionViewItem& option, int width) {
    const QStyle* style = option.widget ? option.widget->style() : QApplication::style();
    // The style's text margin on each side, and one pixel it keeps besides (QCommonStyle's item text).
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, option.widget) + 1;
    return elideName(name, option.fontMetrics, width - 2 * margin);
}

void NameElisionDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    if (!(option->features & QStyleOptionViewItem::HasDisplay)) return;
    int width = option->rect.width();
    if (option->features & QStyleOptionViewItem::HasDecoration) width -= option->decorationSize.width() + 4;
    option->text = shownText(option->text, *option, width);
    option->textElideMode = Qt::ElideLeft; // a pixel or two the margins took: the end stays
}

} // namespace ql
