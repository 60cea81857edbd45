#include "widgets/name_elision.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QFontMetrics>
#include <QHash>
#include <QStyle>
#include <algorithm>
#include <utility>
#include <vector>

namespace ql {
namespace {

bool isPartSeparator(QChar c) {
    return c == QLatin1Char('/') || c == QLatin1Char('.') || c == QLatin1Char(':');
}

bool isWordSeparator(QChar c) {
    return isPartSeparator(c) || c == QLatin1Char('_') || c == QLatin1Char('-');
}

using Range = std::pair<qsizetype, qsizetype>; // [begin, end) in a name

// The word of `name` that holds position `i`, with the separator before it ("/then" of
// "If_0/then_branch"): a separator at `i` is a word of its own.
Range wordAt(const QString& name, qsizetype i) {
    qsizetype begin = i, end = i + 1;
    if (!isWordSeparator(name[i])) {
        while (begin > 0 && !isWordSeparator(name[begin - 1]))
            --begin;
        while (end < name.size() && !isWordSeparator(name[end]))
            ++end;
    }
    return {begin > 0 ? begin - 1 : begin, end};
}

// Where `a` first differs from `b` (a position in `a`).
qsizetype firstDifference(const QString& a, const QString& b) {
    qsizetype i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i])
        ++i;
    return std::min(i, a.size() - 1);
}

// `name` shown as `words` (sorted, apart), each after an ellipsis where something comes before it,
// and then the longest tail of whole parts that fits in `width`, or else the end of its last part.
// Empty when the words leave no room for any of it.
QString keepWords(const QString& name, const std::vector<Range>& words, const QFontMetrics& metrics,
                  int width) {
    const QString ellipsis = QStringLiteral("…");
    QString head;
    qsizetype end = 0;
    for (const auto& [b, e] : words) {
        if (b > end) head += ellipsis;
        head += name.mid(b, e - b);
        end = e;
    }
    if (end == name.size()) return metrics.horizontalAdvance(head) <= width ? head : QString();
    // Whole parts from the first separator after the words, the longest first.
    for (qsizetype cut = end; cut < name.size(); ++cut) {
        if (!isPartSeparator(name[cut])) continue;
        QString text = head + (cut > end ? ellipsis : QString()) + name.mid(cut);
        if (metrics.horizontalAdvance(text) <= width) return text;
    }
    // The last part does not fit after the words: it loses its start, and its ellipsis also stands for
    // the parts skipped before it.
    qsizetype last = name.size() - 1;
    while (last > end && !isPartSeparator(name[last]))
        --last;
    const QString lastPart = name.mid(last);
    QString tail = metrics.elidedText(lastPart, Qt::ElideLeft, width - metrics.horizontalAdvance(head));
    if (!tail.startsWith(ellipsis)) // whole, but not after an ellipsis: one character less
        tail = metrics.elidedText(lastPart, Qt::ElideLeft, metrics.horizontalAdvance(lastPart) - 1);
    if (tail.size() < 3) return {};
    return head + tail;
}

// `words` with the words of `name` that tell it from each of `others`, sorted and merged.
void addTellingWords(std::vector<Range>& words, const QString& name, const QStringList& others) {
    for (const QString& other : others)
        if (other != name && !name.isEmpty()) words.push_back(wordAt(name, firstDifference(name, other)));
    std::sort(words.begin(), words.end());
    std::vector<Range> merged;
    for (const Range& w : words)
        if (!merged.empty() && w.first <= merged.back().second)
            merged.back().second = std::max(merged.back().second, w.second);
        else
            merged.push_back(w);
    words = std::move(merged);
}

} // namespace

QString elideName(const QString& name, const QFontMetrics& metrics, int width) {
    if (metrics.horizontalAdvance(name) <= width) return name;
    const QString ellipsis = QStringLiteral("…");
    const int room = width - metrics.horizontalAdvance(ellipsis);
    // The tail: whole parts from the end while they fit, each starting at its separator.
    qsizetype cut = name.size();
    for (qsizetype i = name.size() - 1; i > 0; --i) {
        if (!isPartSeparator(name[i])) continue;
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
    while (partStart > 0 && !isPartSeparator(name[partStart - 1]))
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

QStringList elideNames(const QStringList& names, const QFontMetrics& metrics, int width) {
    QStringList shown;
    shown.reserve(names.size());
    for (const QString& name : names)
        shown << elideName(name, metrics, width);
    // Names shown alike take the words that tell them apart; the longer text may then meet another
    // name's (a layer's then- and else-branch, then its neighbour layer): a few rounds settle it.
    std::vector<std::vector<Range>> words(static_cast<std::size_t>(names.size()));
    for (int round = 0; round < 4; ++round) {
        QHash<QString, QStringList> alike; // shown text -> the names showing it
        for (qsizetype i = 0; i < names.size(); ++i)
            alike[shown[i]] << names[i];
        bool changed = false;
        for (qsizetype i = 0; i < names.size(); ++i) {
            const QStringList others = alike.value(shown[i]);
            // (More than kMaxTold names shown alike cannot all be told apart in a column this narrow,
            // and comparing each with each would cost the square of a crafted file's count.)
            if (others.size() < 2 || others.size() > kMaxTold) continue;
            auto& kept = words[static_cast<std::size_t>(i)];
            addTellingWords(kept, names[i], others);
            if (kept.empty()) continue; // the same name twice
            QString told = keepWords(names[i], kept, metrics, width);
            if (told.isEmpty() || told == shown[i]) continue;
            shown[i] = told;
            changed = true;
        }
        if (!changed) break;
    }
    return shown;
}

void NameElisionDelegate::watch(const QAbstractItemModel* model) const {
    if (m_model == model) return;
    if (m_model) disconnect(m_model.data(), nullptr, this, nullptr);
    m_shown.clear();
    m_model = model;
    if (!model) return;
    const auto forget = [this] { m_shown.clear(); };
    connect(model, &QAbstractItemModel::modelReset, this, forget);
    connect(model, &QAbstractItemModel::layoutChanged, this, forget);
    connect(model, &QAbstractItemModel::rowsInserted, this, forget);
    connect(model, &QAbstractItemModel::rowsRemoved, this, forget);
    connect(model, &QAbstractItemModel::rowsMoved, this, forget);
    connect(model, &QAbstractItemModel::dataChanged, this, forget);
}

QString NameElisionDelegate::shownText(const QModelIndex& index, const QStyleOptionViewItem& option,
                                       int width) const {
    const QStyle* style = option.widget ? option.widget->style() : QApplication::style();
    // The style's text margin on each side, and one pixel it keeps besides (QCommonStyle's item text).
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, option.widget) + 1;
    const int room = width - 2 * margin;
    const QString name = index.data(Qt::DisplayRole).toString();
    const QAbstractItemModel* model = index.model();
    // A column of more names than kMaxColumn elides each alone: the column-wide pass reads every
    // name in it, and a file may list hundreds of thousands.
    if (!model || model->rowCount(index.parent()) > kMaxColumn)
        return elideName(name, option.fontMetrics, room);
    watch(model);
    if (m_shown.size() > 64) m_shown.clear(); // widths a resize went through
    auto& shown =
        m_shown[Key{QPersistentModelIndex(index.parent()), index.column(), room, option.font.key()}];
    if (shown.isEmpty()) { // the cell's column beside it: its siblings under one parent
        QStringList names;
        for (int r = 0; r < model->rowCount(index.parent()); ++r)
            names << model->index(r, index.column(), index.parent()).data(Qt::DisplayRole).toString();
        const QStringList texts = elideNames(names, option.fontMetrics, room);
        for (qsizetype k = 0; k < names.size(); ++k)
            shown.insert(names[k], texts[k]);
    }
    return shown.value(name, elideName(name, option.fontMetrics, room));
}

void NameElisionDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    if (!(option->features & QStyleOptionViewItem::HasDisplay)) return;
    int width = option->rect.width();
    if (option->features & QStyleOptionViewItem::HasDecoration) width -= option->decorationSize.width() + 4;
    option->text = shownText(index, *option, width);
    option->textElideMode = Qt::ElideLeft; // a pixel or two the margins took: the end stays
}

} // namespace ql
