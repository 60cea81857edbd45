#include "widgets/clipping_page.h"

#include "analysis/clip_spans.h"
#include "job/job.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"

#include <QLabel>
#include <cmath>

namespace ql {

ClippingPage::ClippingPage(QWidget* parent)
    : PlotPage(parent) {
    m_clip =
        addPlot(tr("Clipped elements per group"),
                tr("Share of each scale group's elements cut off by the code range, low and high; red groups "
                   "lose more to clipping than to rounding"));
    m_clip->xAxis->setLabel(tr("group (channel / block)"));
    m_clip->yAxis->setLabel(tr("clipped %"));
    m_sqnr = addPlot(tr("SQNR per group"), tr("Signal-to-quantization-noise ratio of each scale group in dB "
                                              "(higher is better); A and, when comparing, B"));
    m_sqnr->xAxis->setLabel(tr("group (channel / block)"));
    m_sqnr->yAxis->setLabel(tr("SQNR dB"));
    clear(tr("Run a quantization to see clipping per group."));
}

void ClippingPage::setOutcome(const TensorOutcome& o) {
    clear({});
    const auto& groups = o.a.report.analysis.clipping.groups();
    m_highlighted = 0;
    const std::size_t size = clipSpanSize(groups.size());
    QVector<double> keys, low, high, dominated, sqnrA, sqnrB, keysB;
    for (const ClipSpan& s : clipSpans(groups)) {
        const GroupClipping& c = s.merged;
        const double n = c.count ? static_cast<double>(c.count) : 1.0;
        keys << s.key;
        m_highlighted += s.clippingDominates;
        const bool dom = s.clippingDominates > 0;
        const double lowPct = 100.0 * c.clippedLow / n;
        const double highPct = 100.0 * c.clippedHigh / n;
        low << (dom ? 0 : lowPct);
        high << (dom ? 0 : highPct);
        dominated << (dom ? lowPct + highPct : 0);
        sqnrA << s.worstSqnr;
    }
    if (o.b) {
        for (const ClipSpan& s : clipSpans(o.b->report.analysis.clipping.groups())) {
            keysB << s.key;
            sqnrB << s.worstSqnr;
        }
    }
    const double width = size > 1 ? static_cast<double>(size) : (groups.size() > 200 ? 1.0 : 0.8);
    auto bars = [&](const QVector<double>& v, const QColor& color, const QString& name, QCPBars* below) {
        auto* b = new QCPBars(m_clip->xAxis, m_clip->yAxis);
        b->setName(name);
        b->setWidth(width);
        b->setPen(Qt::NoPen);
        b->setBrush(color);
        b->setData(keys, v, true);
        if (below) b->moveAbove(below);
        return b;
    };
    QCPBars* l = bars(low, colors::a().lighter(130), tr("clipped low"), nullptr);
    QCPBars* h = bars(high, colors::a(), tr("clipped high"), l);
    bars(dominated, colors::clipped(), tr("clipping dominates"), h);
    m_clip->legend->setVisible(true);
    m_clip->rescaleAxes();
    m_clip->xAxis->setRange(-1, static_cast<double>(groups.size()));
    double most = 0;
    for (qsizetype i = 0; i < keys.size(); ++i)
        most = std::max(most, low[i] + high[i] + dominated[i]);
    m_clip->yAxis->setRange(0, most > 0 ? most * 1.15 : 1.0); // nothing clipped: a calm empty axis

    auto line = [&](const QVector<double>& k, const QVector<double>& v, const QColor& color,
                    const QString& name) {
        QCPGraph* g = m_sqnr->addGraph();
        g->setName(name);
        g->setPen(QPen(color, 1.2));
        g->setLineStyle(v.size() > 1 ? QCPGraph::lsLine : QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, v.size() > 256 ? 2 : 4));
        g->setData(k, v, true);
    };
    line(keys, sqnrA, colors::a(), qs(o.a.label));
    if (!sqnrB.isEmpty()) line(keysB, sqnrB, colors::b(), qs(o.b->label));
    m_sqnr->legend->setVisible(true);
    m_sqnr->rescaleAxes();
    m_sqnr->xAxis->setRange(-1, static_cast<double>(groups.size()));
    const QCPRange r = m_sqnr->yAxis->range();
    m_sqnr->yAxis->setRange(r.lower - 2, r.upper + 2);

    const std::size_t measured = o.a.report.analysis.clipping.groupCount();
    QString shown = measured > groups.size()
                        ? tr("The first %1 of %2 groups (a whole-model run keeps the rows its report lists)")
                              .arg(groups.size())
                              .arg(measured)
                        : tr("%1 groups").arg(groups.size());
    if (size > 1)
        shown += tr(", drawn in spans of %1 (a bar: the span's groups together, red if one of them is; SQNR: "
                    "its worst group)")
                     .arg(size);
    setNote(tr("%1; %2 where clipping causes more squared error than rounding (red).")
                .arg(shown)
                .arg(m_highlighted));
    m_clip->replot();
    m_sqnr->replot();
}

} // namespace ql
