#include "widgets/comparison_page.h"

#include "job/job.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"

#include <QLabel>

namespace ql {

ComparisonPage::ComparisonPage(QWidget* parent)
    : PlotPage(parent) {
    m_diff = addPlot(tr("Code differences B − A"),
                     tr("How many elements B coded differently from A, by how many "
                        "steps (±1 LSB is usually a rounding or scale-op difference)"));
    m_diff->xAxis->setLabel(tr("code B − code A"));
    m_diff->yAxis->setLabel(tr("elements"));
    m_map = addPlot(tr("Where codes differ"), tr("Mismatched codes over the tensor seen as rows × columns "
                                                 "(axis 0 × the rest), coarsened to at most 64 × 64 cells"));
    m_map->xAxis->setLabel(tr("column"));
    m_map->yAxis->setLabel(tr("row"));
    m_map->yAxis->setRangeReversed(true);
    clear(tr("Choose a backend B or preset B under Compare and run to compare codes."));
}

void ComparisonPage::setOutcome(const TensorOutcome& o) {
    clear({});
    if (!o.comparison) {
        setNote(tr("No comparison in this run: choose a backend B or preset B under Compare."));
        return;
    }
    const Comparison& c = *o.comparison;
    // Agreeing codes (difference 0) get their own colour and a log axis keeps a handful of
    // mismatches visible next to thousands of matches.
    QVector<double> keys, values, zeroKey, zeroValue;
    for (const auto& [d, n] : c.codeDiff) {
        (d == 0 ? zeroKey : keys) << d;
        (d == 0 ? zeroValue : values) << static_cast<double>(n);
    }
    if (zeroKey.isEmpty() && c.count > c.mismatched) {
        zeroKey << 0;
        zeroValue << static_cast<double>(c.count - c.mismatched);
    }
    auto addBars = [this](const QVector<double>& k, const QVector<double>& v, const QColor& color,
                          const QString& name) {
        auto* bars = new QCPBars(m_diff->xAxis, m_diff->yAxis);
        bars->setName(name);
        bars->setWidth(0.8);
        bars->setPen(Qt::NoPen);
        bars->setBrush(color);
        bars->setBaseValue(0.5);
        bars->setData(k, v, true);
    };
    addBars(zeroKey, zeroValue, QColor(44, 160, 44), tr("same code"));
    addBars(keys, values, colors::b(), tr("different code"));
    m_diff->legend->setVisible(true);
    m_diff->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_diff->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_diff->rescaleAxes();
    const QCPRange r = m_diff->xAxis->range();
    m_diff->xAxis->setRange(std::min(r.lower, -1.0) - 1, std::max(r.upper, 1.0) + 1);
    m_diff->yAxis->setRange(0.5, std::max(2.0, m_diff->yAxis->range().upper * 3));

    const MismatchMap& mm = o.mismatches;
    if (!mm.counts.empty()) {
        auto* map = new QCPColorMap(m_map->xAxis, m_map->yAxis);
        const auto [rows, cols] = matrixView(o.a.report.shape);
        map->data()->setSize(mm.cols, mm.rows);
        map->data()->setRange(QCPRange(0, static_cast<double>(cols)), QCPRange(0, static_cast<double>(rows)));
        for (int r0 = 0; r0 < mm.rows; ++r0)
            for (int c0 = 0; c0 < mm.cols; ++c0)
                map->data()->setCell(
                    c0, r0,
                    mm.counts[static_cast<std::size_t>(r0) * static_cast<std::size_t>(mm.cols) +
                              static_cast<std::size_t>(c0)]);
        // White where every code agrees, so a handful of mismatches stands out in red.
        QCPColorGradient gradient;
        gradient.setColorStopAt(0.0, Qt::white);
        gradient.setColorStopAt(1e-6, QColor(255, 190, 120));
        gradient.setColorStopAt(1.0, QColor(180, 0, 0));
        map->setGradient(gradient);
        map->setInterpolate(false);
        map->rescaleDataRange(true);
        m_map->rescaleAxes();
        setTitle(m_map, tr("Where codes differ (mismatches per cell)"));
    } else {
        setTitle(m_map, tr("Where codes differ: nowhere, every code agrees"));
    }

    QString text = tr("<b>%1</b> vs <b>%2</b>: %3 of %4 codes differ (%5%).")
                       .arg(qs(c.labelA).toHtmlEscaped(), qs(c.labelB).toHtmlEscaped())
                       .arg(c.mismatched)
                       .arg(c.count)
                       .arg(fmtNumber(c.count ? 100.0 * c.mismatched / c.count : 0.0, 3));
    if (c.scaleCount)
        text += tr(" Scales differing: %1 of %2 (max %3 ULP).")
                    .arg(c.scaleMismatches)
                    .arg(c.scaleCount)
                    .arg(c.maxScaleUlp);
    text += QStringLiteral("<br>") + qs(c.verdict).toHtmlEscaped();
    for (const MismatchCause& cause : c.causes)
        text += QStringLiteral("<br>• <b>%1</b> (%2 explained): %3")
                    .arg(qs(cause.summary).toHtmlEscaped())
                    .arg(cause.explained)
                    .arg(qs(cause.detail).toHtmlEscaped());
    setNote(text);
    m_diff->replot();
    m_map->replot();
}

} // namespace ql
