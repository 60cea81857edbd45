#include "widgets/histogram_pages.h"

#include "job/job.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"

#include <QCheckBox>
#include <QLabel>
#include <QVBoxLayout>

namespace ql {
namespace {

void verticalLine(QCustomPlot* plot, double x, const QPen& pen) {
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(pen);
}

} // namespace

ValueHistogramPage::ValueHistogramPage(QWidget* parent)
    : PlotPage(parent) {
    m_log = new QCheckBox(tr("Log scale"), this);
    m_log->setToolTip(tr("Show element counts on a logarithmic axis, so a few outliers far from the "
                         "bulk (a value at ±30 among millions near 0) stay visible"));
    m_layout->insertWidget(0, m_log);
    m_plot = addPlot(tr("Values"),
                     tr("Histogram of the tensor's values; after a run, grey lines are the "
                        "reconstruction grid of one group and red dashed lines its clip thresholds"));
    m_plot->xAxis->setLabel(tr("value"));
    m_plot->yAxis->setLabel(tr("elements"));
    connect(m_log, &QCheckBox::toggled, this, [this] {
        drawValues();
        m_plot->replot();
    });
    clear(tr("Select a tensor to see its values."));
}

void ValueHistogramPage::clear(const QString& message) {
    m_values.reset();
    m_valuesGraph = nullptr;
    PlotPage::clear(message);
}

// The histogram (again, when the scale changes: a log axis leaves empty bins out rather than drawing
// them down to nothing), and the y axis fitted to it.
void ValueHistogramPage::drawValues() {
    if (m_valuesGraph) m_plot->removeGraph(m_valuesGraph);
    m_valuesGraph = nullptr;
    const bool log = m_log->isChecked();
    if (m_values) m_valuesGraph = addHistogram(m_plot, *m_values, colors::a(), tr("values"), log);
    setCountScale(m_plot, log);
}

void ValueHistogramPage::setPreview(const ValuePreview& preview) {
    clear({});
    m_values = preview.values;
    drawValues();
    m_plot->xAxis->rescale();
    setTitle(m_plot,
             tr("Values of %1 (%2 elements)").arg(QStringLiteral("%1"), QString::number(preview.count)),
             qs(preview.tensor));
    m_plot->replot();
    m_gridLines = 0;
}

void ValueHistogramPage::setOutcome(const TensorOutcome& o) {
    clear({});
    const TensorAnalysis& a = o.a.report.analysis;
    m_values = a.values;
    drawValues();
    m_plot->xAxis->rescale();
    // The grid is drawn only while lines stay apart; 256 int8 levels over a narrow plot would be a
    // grey wash, so a dense grid is thinned to every k-th level and the note says so.
    const int n = static_cast<int>(a.grid.size());
    const int stride = std::max(1, n / 64);
    m_gridLines = 0;
    for (int i = 0; i < n; i += stride) {
        verticalLine(m_plot, a.grid[static_cast<std::size_t>(i)], QPen(colors::grid(), 1));
        ++m_gridLines;
    }
    QPen clip(colors::clipped(), 1.5, Qt::DashLine);
    verticalLine(m_plot, a.gridEdges.low, clip);
    verticalLine(m_plot, a.gridEdges.high, clip);
    const double lo = std::min(m_plot->xAxis->range().lower, a.gridEdges.low);
    const double hi = std::max(m_plot->xAxis->range().upper, a.gridEdges.high);
    m_plot->xAxis->setRange(lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo));
    setTitle(
        m_plot,
        tr("Values of %1 with the grid of group %2").arg(QStringLiteral("%1"), QString::number(a.gridGroup)),
        qs(o.a.report.name));
    QString note = tr("%1 reconstruction levels in group %2%3; clip thresholds [%4, %5].")
                       .arg(n)
                       .arg(a.gridGroup)
                       .arg(stride > 1 ? tr(" (one in %1 drawn)").arg(stride) : QString())
                       .arg(fmtNumber(a.gridEdges.low), fmtNumber(a.gridEdges.high));
    // The bins span every group's grid (report_schema.md): values beyond all of them are clipped.
    if (const std::int64_t beyond = a.values.underflow() + a.values.overflow(); beyond > 0)
        note += tr(" %1 values beyond every group's range (clipped) are not drawn.").arg(beyond);
    setNote(note);
    m_plot->replot();
}

ErrorHistogramPage::ErrorHistogramPage(QWidget* parent)
    : PlotPage(parent) {
    m_log = new QCheckBox(tr("Log scale"), this);
    m_log->setToolTip(
        tr("Show element counts on a logarithmic axis, so rare large errors (clipping) stay visible"));
    m_log->setChecked(true);
    m_layout->insertWidget(0, m_log);
    m_plot = addPlot(tr("Error x − x̂"),
                     tr("Histogram of the quantization error per element (A, and B when "
                        "comparing); the note splits the squared error into clipping and rounding"));
    m_plot->xAxis->setLabel(tr("error"));
    m_plot->yAxis->setLabel(tr("elements"));
    connect(m_log, &QCheckBox::toggled, this, [this] {
        applyScale();
        m_plot->replot();
    });
    setCountScale(m_plot, m_log->isChecked()); // the axis the box names from the start
    clear(tr("Run a quantization to see its error."));
}

void ErrorHistogramPage::applyScale() {
    m_plot->xAxis->rescale();
    setCountScale(m_plot, m_log->isChecked());
}

void ErrorHistogramPage::setOutcome(const TensorOutcome& o) {
    clear({});
    const bool log = m_log->isChecked();
    addHistogram(m_plot, o.a.report.analysis.error, colors::a(), qs(o.a.label), log);
    if (o.b) addHistogram(m_plot, o.b->report.analysis.error, colors::b(), qs(o.b->label), log);
    m_plot->legend->setVisible(true);
    applyScale();
    const GroupClipping t = o.a.report.analysis.clipping.total();
    const double total = t.clipErrorSq + t.roundErrorSq;
    const double clipShare = total > 0 ? 100.0 * t.clipErrorSq / total : 0.0;
    setTitle(m_plot, tr("Error x − x̂ of %1"), qs(o.a.report.name));
    const Histogram& error = o.a.report.analysis.error;
    QString sizes = tr("Max |error| %1, RMSE %2.")
                        .arg(fmtNumber(o.a.report.analysis.stats.maxAbsError()),
                             fmtNumber(o.a.report.analysis.stats.rmse()));
    // The bins span the largest rounding error, passing it by less than a bin (report_schema.md):
    // the errors beyond are clipped ones.
    if (const std::int64_t beyond = error.underflow() + error.overflow(); beyond > 0)
        sizes += tr(" %1 clipped errors beyond ±%2, past the largest rounding error, are not drawn.")
                     .arg(beyond)
                     .arg(fmtNumber(error.hi()));
    if (t.clippedLow + t.clippedHigh == 0) // the usual case, said in fewer lines
        setNote(tr("<b>Nothing clipped</b>: all the error is rounding. %1").arg(sizes));
    else
        setNote(tr("<b>Clipping</b>: %1 elements (%2 low, %3 high) cause <b>%4%</b> of the squared error; "
                   "<b>rounding</b> the other %5%. %6")
                    .arg(t.clippedLow + t.clippedHigh)
                    .arg(t.clippedLow)
                    .arg(t.clippedHigh)
                    .arg(fmtNumber(clipShare, 3), fmtNumber(100.0 - clipShare, 3), sizes));
    m_plot->replot();
}

} // namespace ql
