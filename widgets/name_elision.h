#pragma once
// Shortening tensor names to a width so that names differing in one part stay apart. Eliding the
// middle made model_weights/If_1_param_conv/weight and model_weights/If_2_param_conv/weight both
// read "model_weights/If_…param_conv/weight": the parts that tell names apart are most often the
// last ones (the layer, then the parameter), so those are kept whole and the start gives way. Where
// that still leaves two names of one column alike (Silero VAD's "If_0/then_branch/…" and
// "If_0/else_branch/…" copies of a layer), each keeps the words that tell it from the others.
#include <QPersistentModelIndex>
#include <QPointer>
#include <QStyledItemDelegate>
#include <map>
#include <tuple>

class QFontMetrics;

namespace ql {

/// `name` within `width` pixels: whole as long as it fits; else its longest tail of whole parts
/// (split at '/', '.' and ':'), after the start of the part before it ("…/If_1_th…/weight"); a
/// last part wider than `width` alone loses its start.
QString elideName(const QString& name, const QFontMetrics& metrics, int width);

/// `names` (one column of a table) each within `width` pixels, as elideName shows them, except where
/// that shows two names alike: those keep, in order, the word of each where it first differs from
/// each of the others (words split at '/', '.', ':', '_' and '-'), and then the longest tail of
/// whole parts that still fits ("…/then….0….weight"). Names left alike when even that
/// does not fit keep elideName's text, as do groups of more than kMaxTold names shown alike.
QStringList elideNames(const QStringList& names, const QFontMetrics& metrics, int width);
inline constexpr qsizetype kMaxTold = 64;
/// NameElisionDelegate tells a column's names apart (elideNames) up to this many rows; in a longer
/// column each cell is elided alone (elideName).
inline constexpr int kMaxColumn = 20000;

/// Draws a view's column of names through elideNames over the names beside it (the cell's siblings
/// in its column; the view's own eliding would cut the middle).
class NameElisionDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    /// The text the cell `index`, `width` pixels wide in the font of `option`, shows (tests).
    QString shownText(const QModelIndex& index, const QStyleOptionViewItem& option, int width) const;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;

private:
    // Each column's shown names by parent, column, width and font, until the model changes.
    using Key = std::tuple<QPersistentModelIndex, int, int, QString>;
    mutable std::map<Key, QHash<QString, QString>> m_shown;
    mutable QPointer<const QAbstractItemModel> m_model;
    void watch(const QAbstractItemModel* model) const;
};

} // namespace ql
