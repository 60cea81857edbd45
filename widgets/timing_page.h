#pragma once
// Timing bars per phase (prepare, upload, kernel, download, total) and per backend, with GB/s.
#include "widgets/plot_page.h"

namespace ql {

class TimingPage : public PlotPage {
    Q_OBJECT
public:
    explicit TimingPage(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome) override;

private:
    QCustomPlot* m_plot;
};

} // namespace ql
