#include "widgets/clipping_page.h"

#include "analysis/clip_spans.h"
#include "job/job.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"

#include <QApplication>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <algorithm>
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
    // Hovering over a group (its bar, or its place on the SQNR line) tells its figures; a click
    // selects it.
    for (QCustomPlot* plot : {m_clip, m_sqnr}) {
        plot->setMouseTracking(true);
        connect(plot, &QCustomPlot::mouseMove, this, [this, plot](QMouseEvent* e) { hover(plot, e); });
        connect(plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { m_pressedAt = e->pos(); });
        connect(plot, &QCustomPlot::mouseRelease, this, [this, plot](QMouseEvent* e) {
            if ((e->pos() - m_pressedAt).manhattanLength() <= QApplication::startDragDistance())
                selectSpan(spanAt(plot, e->pos()));
        });
    }
    clear(tr("Run a quantization to see clipping per group."));
}

void ClippingPage::clear(const QString& message) {
    m_spans.clear();
    m_spanSize = 1;
    m_selected = -1;
    m_baseNote.clear();
    PlotPage::clear(message);
}

int ClippingPage::spanAt(const QCustomPlot* plot, const QPoint& pos) const {
    if (m_spans.empty() || !plot->axisRect()->rect().contains(pos)) return -1;
    const double key = plot->xAxis->pixelToCoord(pos.x());
    const double size = static_cast<double>(m_spanSize);
    const double i = std::floor((key + 0.5) / size);
    if (i < 0 || i >= static_cast<double>(m_spans.size())) return -1;
    return static_cast<int>(i);
}

QString ClippingPage::spanText(int span) const {
    const ClipSpan& s = m_spans[static_cast<std::size_t>(span)];
    const GroupClipping& c = s.merged;
    const std::size_t first = static_cast<std::size_t>(span) * m_spanSize;
    const std::size_t last = first + m_spanSize - 1;
    const QString which = m_spanSize == 1 || c.count == 0
                              ? tr("Group %1").arg(first)
                              : tr("Groups %1–%2").arg(first).arg(std::min(last, m_groups - 1));
    const double n = c.count ? static_cast<double>(c.count) : 1.0;
    const double squared = c.clipErrorSq + c.roundErrorSq;
    QString text = tr("%1: %2 elements; clipped %3 low, %4 high (%5 %)")
                       .arg(which)
                       .arg(c.count)
                       .arg(c.clippedLow)
                       .arg(c.clippedHigh)
                       .arg(fmtNumber(100.0 * static_cast<double>(c.clippedLow + c.clippedHigh) / n, 3));
    text += tr("; SQNR %1 dB").arg(fmtNumber(m_spanSize == 1 ? c.sqnrDb() : s.worstSqnr, 4));
    if (m_spanSize > 1) text += tr(" at worst");
    text += tr("; max |error| %1").arg(fmtNumber(c.maxAbsError));
    if (squared > 0)
        text += tr("; clipping causes %1 % of its squared error")
                    .arg(fmtNumber(100.0 * c.clipErrorSq / squared, 3));
    if (c.flushedToZero > 0) text += tr("; %1 flushed to zero").arg(c.flushedToZero);
    return text;
}

void ClippingPage::hover(QCustomPlot* plot, QMouseEvent* event) {
    const int span = spanAt(plot, event->pos());
    m_hoverText = span < 0 ? QString() : spanText(span);
    if (m_hoverText.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(plot->mapToGlobal(event->pos()), m_hoverText, plot);
}

void ClippingPage::selectSpan(int span) {
    m_selected = span;
    for (QCustomPlot* plot : {m_clip, m_sqnr}) {
        for (int i = plot->itemCount() - 1; i >= 0; --i)
            if (plot->item(i)->objectName() == QLatin1String("selected group")) plot->removeItem(i);
        if (span >= 0) { // a band over the span's column, behind nothing it would hide
            auto* band = new QCPItemRect(plot);
            band->setObjectName(QStringLiteral("selected group"));
            const double lo = static_cast<double>(static_cast<std::size_t>(span) * m_spanSize) - 0.5;
            band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
            band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
            band->topLeft->setCoords(lo, 0);
            band->bottomRight->setCoords(lo + static_cast<double>(m_spanSize), 1);
            band->setPen(QPen(QColor(40, 40, 40, 160), 1, Qt::DotLine));
            band->setBrush(QColor(255, 215, 0, 70));
        }
        plot->replot();
    }
    setNote(span < 0 ? m_baseNote : m_baseNote + QLatin1Char('\n') + tr("Selected: %1.").arg(spanText(span)));
    if (span >= 0) {
        const std::size_t first = static_cast<std::size_t>(span) * m_spanSize;
        emit groupSelected(static_cast<qint64>(first),
                           static_cast<qint64>(std::min(m_spanSize, m_groups - first)));
    }
}

void ClippingPage::setOutcome(const TensorOutcome& o) {
    clear({});
    const auto& groups = o.a.report.analysis.clipping.groups();
    m_highlighted = 0;
    const std::size_t size = clipSpanSize(groups.size());
    m_spanSize = size;
    m_groups = groups.size();
    m_spans = clipSpans(groups);
    QVector<double> keys, low, high, dominated, sqnrA, sqnrB, keysB;
    for (const ClipSpan& s : m_spans) {
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
    m_baseNote = tr("%1; %2 where clipping causes more squared error than rounding (red). Point at a "
                    "group for its figures; click to select it.")
                     .arg(shown)
                     .arg(m_highlighted);
    setNote(m_baseNote);
    m_clip->replot();
    m_sqnr->replot();
}

} // namespace ql
