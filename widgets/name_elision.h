#pragma once
// Shortening tensor names to a width so that names differing in one part stay apart. Eliding the
// middle made model_weights/If_1_param_conv/weight and model_weights/If_2_param_conv/weight both
// read "model_weights/If_…param_conv/weight": the parts that tell names apart are most often the
// last ones (the layer, then the parameter), so those are kept whole and the start gives way.
#include <QStyledItemDelegate>

class QFontMetrics;

namespace ql {

/// `name` within `width` pixels: whole as long as it fits; else its longest tail of whole parts
/// (split at '/', '.' and ':'), after the start of the part before it ("…/If_1_th…/weight"); a
/// last part wider than `width` alone loses its start.
QString elideName(const QString& name, const QFontMetrics& metrics, int width);

/// Draws a view's column of names through elideName (the view's own eliding would cut the middle).
class NameElisionDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    /// The text a cell `width` pixels wide shows for `name` in the font of `option` (tests).
    static QString shownText(const QString& name, const QStyleOptionViewItem& option, int width);

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;
};

} // namespace ql
