#pragma once
// Clipping per channel / group (bars; groups where clipping causes more error than rounding are
// highlighted) and the SQNR of each group.
#include "widgets/plot_page.h"

namespace ql {

class ClippingPage : public PlotPage {
    Q_OBJECT
public:
    explicit ClippingPage(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome) override;
    /// Groups highlighted as clipping-dominated in the last outcome (tests).
    int highlightedGroups() const { return m_highlighted; }

private:
    QCustomPlot* m_clip;
    QCustomPlot* m_sqnr;
    int m_highlighted = 0;
};

} // namespace ql
