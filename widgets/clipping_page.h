#pragma once
// Clipping per channel / group (bars; groups where clipping causes more error than rounding are
// highlighted) and the SQNR of each group.
#include "analysis/clip_spans.h"
#include "widgets/plot_page.h"

#include <QPoint>
#include <vector>

class QMouseEvent;

namespace ql {

class ClippingPage : public PlotPage {
    Q_OBJECT
public:
    explicit ClippingPage(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome) override;
    void clear(const QString& message) override;
    /// Groups highlighted as clipping-dominated in the last outcome (tests).
    int highlightedGroups() const { return m_highlighted; }
    /// The figures of the group (or span of groups) under the pointer; empty when none (tests).
    QString hoverText() const { return m_hoverText; }
    /// The selected bar (a group, or a span of groups when drawn in spans); -1 when none.
    int selectedBar() const { return m_selected; }

signals:
    /// A click selected groups [first, first + count) (one group unless the plot draws spans).
    void groupSelected(qint64 first, qint64 count);

private:
    int spanAt(const QCustomPlot* plot, const QPoint& pos) const;
    QString spanText(int span) const;
    void hover(QCustomPlot* plot, QMouseEvent* event);
    void selectSpan(int span);

    QCustomPlot* m_clip;
    QCustomPlot* m_sqnr;
    int m_highlighted = 0;
    std::vector<ClipSpan> m_spans; // the bars drawn, in order
    std::size_t m_spanSize = 1;    // groups per bar
    std::size_t m_groups = 0;
    int m_selected = -1;
    QString m_hoverText;
    QString m_baseNote; // the note without the selection
    QPoint m_pressedAt;
};

} // namespace ql
