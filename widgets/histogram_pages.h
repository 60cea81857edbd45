#pragma once
// Value histogram (with the quantization grid and clip thresholds) and error histogram (log
// toggle, clipping apart from rounding).
#include "analysis/histogram.h"
#include "widgets/plot_page.h"

#include <optional>

class QCheckBox;

namespace ql {

struct ValuePreview;

class ValueHistogramPage : public PlotPage {
    Q_OBJECT
public:
    explicit ValueHistogramPage(QWidget* parent = nullptr);
    /// The tensor's values before any run (shown as soon as a tensor is selected).
    void setPreview(const ValuePreview& preview);
    void setOutcome(const TensorOutcome& outcome) override;
    void clear(const QString& message) override;
    /// How many grid lines the last outcome drew (tests).
    int gridLineCount() const { return m_gridLines; }
    /// Counts on a log axis (off by default).
    QCheckBox* logToggle() const { return m_log; }

private:
    void drawValues();

    QCustomPlot* m_plot;
    QCheckBox* m_log;
    std::optional<Histogram> m_values; // what the plot shows, redrawn when the scale changes
    QCPGraph* m_valuesGraph = nullptr;
    int m_gridLines = 0;
};

class ErrorHistogramPage : public PlotPage {
    Q_OBJECT
public:
    explicit ErrorHistogramPage(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome) override;
    QCheckBox* logToggle() const { return m_log; }

private:
    void applyScale();

    QCustomPlot* m_plot;
    QCheckBox* m_log;
};

} // namespace ql
