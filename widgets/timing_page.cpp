#include "widgets/timing_page.h"

#include "job/job.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"

#include <QLabel>

namespace ql {
namespace {

QVector<double> phases(const PhaseTimes& t) {
    return {t.prepareMs, t.uploadMs, t.kernelMs, t.downloadMs, t.totalMs};
}

/// Input throughput over `ms`, to three significant digits (a slow run reads 0.0123, not 0.00); "—"
/// when the phase was too short to time.
QString gbps(double bytes, double ms) {
    return ms > 0 ? fmtNumber(bytes / ms / 1e6, 3) : QStringLiteral("—");
}

} // namespace

TimingPage::TimingPage(QWidget* parent)
    : PlotPage(parent) {
    m_plot = addPlot(tr("Time per phase"),
                     tr("Median wall time of each phase per backend: calibration (finding "
                        "the scales), upload, kernel, download, and the whole run. On a GPU a "
                        "calibration done on the host runs while the input uploads, so those two "
                        "bars overlap in time. The legend gives the kernel's input throughput "
                        "(input bytes / kernel time)"));
    m_plot->yAxis->setLabel(tr("milliseconds"));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTicks({1, 2, 3, 4, 5},
                     {tr("calibration"), tr("upload"), tr("kernel"), tr("download"), tr("total")});
    m_plot->xAxis->setTicker(ticker);
    // What each bar measures, in one line above the plot (core/backend/timing.h's phases).
    m_phases = new QLabel(
        tr("calibration: finding the scales · upload: the input to the device · kernel: quantizing and "
           "measuring · download: codes and scales back · total: the whole run"),
        this);
    m_phases->setWordWrap(true);
    m_phases->setToolTip(
        tr("On the CPU backends upload and download are empty. On a tiny tensor the fixed cost of starting "
           "threads outweighs the work, so the multithreaded cpu backend can take longer than "
           "cpu-reference; repeat the run (quantlens-cli --repeat) for a steadier median"));
    m_layout->insertWidget(0, m_phases);
    clear(tr("Run a quantization to see its timings."));
}

void TimingPage::setOutcome(const TensorOutcome& o) {
    clear({});
    std::vector<const SideOutcome*> sides{&o.a};
    if (o.b) sides.push_back(&*o.b);
    auto* group = new QCPBarsGroup(m_plot);
    QStringList lines;
    for (std::size_t i = 0; i < sides.size(); ++i) {
        const SideOutcome& s = *sides[i];
        const Timing& t = s.report.timing;
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(tr("%1: kernel %2 GB/s").arg(qs(s.label), gbps(s.bytesIn, t.median.kernelMs)));
        bars->setWidth(0.35);
        bars->setPen(Qt::NoPen);
        bars->setBrush(i == 0 ? colors::a() : colors::b());
        bars->setData({1, 2, 3, 4, 5}, phases(t.median), true);
        bars->setBarsGroup(group);
        lines << tr("%1 (runs: %2): total %3 ms (min %4, max %5); calibration %6 ms; kernel %7 ms, %8 GB/s; "
                    "whole run %9 GB/s")
                     .arg(qs(s.label))
                     .arg(t.runs)
                     .arg(fmtNumber(t.median.totalMs), fmtNumber(t.min.totalMs), fmtNumber(t.max.totalMs),
                          fmtNumber(t.median.prepareMs), fmtNumber(t.median.kernelMs),
                          gbps(s.bytesIn, t.median.kernelMs), gbps(s.bytesIn, t.median.totalMs));
    }
    m_plot->legend->setVisible(true);
    m_plot->rescaleAxes();
    m_plot->xAxis->setRange(0.4, 5.6);
    m_plot->yAxis->setRange(0, std::max(m_plot->yAxis->range().upper * 1.25, 1e-3));
    setNote(lines.join(QStringLiteral("<br>")));
    m_plot->replot();
}

} // namespace ql
