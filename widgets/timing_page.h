#pragma once
// Timing bars per phase (prepare, upload, kernel, download, total) and per backend, with GB/s.
#include "widgets/plot_page.h"

namespace ql {

class TimingPage : public PlotPage {
    Q_OBJECT
public:
    explicit TimingPage(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome) override;
    /// The line that says what each phase means.
    QLabel* phasesLine() const { return m_phases; }

private:
    QCustomPlot* m_plot;
    QLabel* m_phases;
};

} // namespace ql
