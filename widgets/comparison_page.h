#pragma once
// A-vs-B comparison: histogram of code differences, where the mismatches sit, and which
// convention difference explains them, in words.
#include "widgets/plot_page.h"

namespace ql {

class ComparisonPage : public PlotPage {
    Q_OBJECT
public:
    explicit ComparisonPage(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome) override;

private:
    QCustomPlot* m_diff;
    QCustomPlot* m_map;
};

} // namespace ql
