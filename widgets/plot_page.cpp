#include "widgets/plot_page.h"

#include "analysis/histogram.h"
#include "widgets/name_elision.h"
#include "widgets/qcp.h"
#include "widgets/save_file.h"

#include <QAction>
#include <QEvent>
#include <QFontMetrics>
#include <QLabel>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTextDocument>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace ql {

PlotPage::PlotPage(QWidget* parent)
    : QWidget(parent)
    , m_layout(new QVBoxLayout(this))
    , m_note(new QLabel(this)) {
    m_note->setWordWrap(true);
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->installEventFilter(this); // its height follows its width (fitNote)
    m_layout->setContentsMargins(2, 2, 2, 2);
    m_layout->addWidget(m_note);
    // Every page exports itself from its context menu, not only the current tab from File ▸ Export.
    auto* exportAction = new QAction(tr("Export this plot…"), this);
    exportAction->setToolTip(tr("Save this page as PNG, SVG, PDF or JPEG"));
    connect(exportAction, &QAction::triggered, this, [this] {
        const QString path =
            saveFileName(this, tr("Export plot"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;JPEG (*.jpg)"));
        if (!path.isEmpty() && !exportTo(path)) setNote(tr("Could not write %1.").arg(path));
    });
    addAction(exportAction);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

namespace {

// As many legend entries side by side as the plot's width holds, the rest wrapped to further rows.
void wrapLegend(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    const int room = plot->width() - 24;
    int used = 0, columns = 0;
    for (int i = 0; i < legend->itemCount(); ++i) {
        used += legend->item(i)->minimumOuterSizeHint().width() + legend->columnSpacing();
        if (used > room && columns > 0) break;
        ++columns;
    }
    if (std::max(columns, 1) == legend->wrap()) return;
    legend->setWrap(std::max(columns, 1));
    legend->setFillOrder(QCPLegend::foColumnsFirst, true); // re-flows the entries already there
}

// The most ticks, five at most (QCustomPlot's default), whose labels leave room between them along an
// axis `room` pixels long: a narrow or short plot's labels ran into each other ("-0.001-0.0005").
int ticksThatFit(QCPAxis* axis, double room) {
    const QFontMetrics fm(axis->tickLabelFont());
    const bool across = axis->orientation() == Qt::Horizontal;
    const bool log = axis->scaleType() == QCPAxis::stLogarithmic;
    const QCPRange range = axis->range();
    auto position = [&](double v) { // pixels from the axis's start
        return log ? room * std::log(v / range.lower) / std::log(range.upper / range.lower)
                   : room * (v - range.lower) / range.size();
    };
    const QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
    for (int count = 5; count > 2; --count) {
        ticker->setTickCount(count);
        QVector<double> ticks;
        QVector<QString> labels;
        ticker->generate(range, axis->parentPlot()->locale(), axis->numberFormat().at(0),
                         axis->numberPrecision(), ticks, nullptr, &labels);
        bool fits = true;
        for (qsizetype i = 1; i < ticks.size() && i < labels.size() && fits; ++i) {
            const double needs =
                across ? (fm.horizontalAdvance(labels[i]) + fm.horizontalAdvance(labels[i - 1])) / 2.0 + 6
                       : fm.height();
            fits = std::abs(position(ticks[i]) - position(ticks[i - 1])) >= needs;
        }
        if (fits) return count;
    }
    return 2;
}

// Each axis's tick count fitted to its length (category axes keep their own ticks). The axes' own
// rectangle is laid out only after this replot: their length is the widget's, less the other axis's
// labels, the title and the legend.
void fitTicks(QCustomPlot* plot) {
    auto fit = [](QCPAxis* axis, int room) {
        if (axis->ticker().dynamicCast<QCPAxisTickerText>() || !(axis->range().size() > 0) || room <= 0)
            return;
        if (axis->scaleType() == QCPAxis::stLogarithmic && !(axis->range().lower > 0)) return;
        axis->ticker()->setTickCount(ticksThatFit(axis, room));
    };
    fit(plot->xAxis, plot->width() - 70);
    fit(plot->yAxis, plot->height() - 90);
}

} // namespace

// The legend in a row of its own under the title, entries side by side: inside the axes it covered a
// third of a narrow plot, and whatever was drawn there (a red span, the middle of a histogram).
void PlotPage::placeLegendUnderTitle(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    legend->setFont(QFont(font().family(), 8));
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setMargins(QMargins(4, 0, 4, 0));
    legend->setColumnSpacing(12);
    legend->setRowSpacing(0);
    legend->setIconSize(18, 9);
    plot->axisRect()->insetLayout()->take(legend);
    // Beside it an element with no maximum width: an empty legend's maximum is its margins, and alone in
    // the row it would narrow the axes below to that.
    auto* row = new QCPLayoutGrid;
    plot->plotLayout()->insertRow(1);
    plot->plotLayout()->addElement(1, 0, row);
    plot->plotLayout()->setRowStretchFactor(1, 0.001); // its own height; the axes take the rest
    row->addElement(0, 0, legend);
    row->addElement(0, 1, new QCPLayoutElement(plot));
    row->setColumnStretchFactor(1, 0.001);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
}

void PlotPage::fitTicksOnReplot(QCustomPlot* plot) {
    connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { fitTicks(plot); });
}

QCustomPlot* PlotPage::addPlot(const QString& title, const QString& tooltip) {
    auto* plot = new QCustomPlot(this);
    plot->setToolTip(tooltip);
    plot->setMinimumHeight(120); // two to a page, and the note, in a 760-pixel window
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0,
                                   new QCPTextElement(plot, title, QFont(font().family(), 10, QFont::Bold)));
    placeLegendUnderTitle(plot);
    connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { wrapLegend(plot); }); // to the plot's width
    fitTicksOnReplot(plot);
    m_layout->insertWidget(m_layout->count() - 1, plot, 1);
    m_plots.push_back(plot);
    m_titles.push_back(title);
    return plot;
}

namespace {

// A title wider than its plot is shortened, and refitted when the plot is resized: a title naming a
// tensor shortens the name (elideName: its last parts stay, so two tensors' plots read apart), the
// kind of plot stays whole; any other loses its middle.
class TitleFitter : public QObject {
public:
    explicit TitleFitter(QCustomPlot* plot)
        : QObject(plot)
        , m_plot(plot) {
        plot->installEventFilter(this);
    }
    void setTitle(const QString& title, const QString& name) {
        m_title = title;
        m_name = name;
        fit();
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == m_plot && event->type() == QEvent::Resize) fit();
        return false;
    }

private:
    void fit() {
        auto* t = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0));
        if (!t) return;
        const int room = std::max(m_plot->width() - 12, 40);
        const QFontMetrics metrics(t->font());
        if (m_name.isEmpty()) return t->setText(metrics.elidedText(m_title, Qt::ElideMiddle, room));
        const QString whole = m_title.arg(m_name);
        if (metrics.horizontalAdvance(whole) <= room) return t->setText(whole);
        // The name keeps two thirds of the width at least: it is what tells two plots apart.
        const int nameRoom = std::max(room - metrics.horizontalAdvance(m_title.arg(QString())), room * 2 / 3);
        const QString shortened = m_title.arg(elideName(m_name, metrics, nameRoom));
        t->setText(metrics.elidedText(shortened, Qt::ElideRight, room));
    }
    QCustomPlot* m_plot;
    QString m_title; // with %1 where the name goes, when there is one
    QString m_name;
};

} // namespace

void PlotPage::setTitle(QCustomPlot* plot, const QString& title) {
    setTitle(plot, title, {});
}

void PlotPage::setTitle(QCustomPlot* plot, const QString& title, const QString& name) {
    // TitleFitter has no meta-object of its own, so findChild (a qobject_cast) would take any child.
    TitleFitter* fitter = nullptr;
    for (QObject* child : plot->children())
        if ((fitter = dynamic_cast<TitleFitter*>(child))) break;
    if (!fitter) fitter = new TitleFitter(plot);
    fitter->setTitle(title, name);
}

QString PlotPage::titleText(const QCustomPlot* plot) {
    const auto* t = qobject_cast<const QCPTextElement*>(plot->plotLayout()->element(0, 0));
    return t ? t->text() : QString();
}

void PlotPage::setCountScale(QCustomPlot* plot, bool log) {
    QCPAxis* y = plot->yAxis;
    y->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (log)
        y->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        y->setTicker(QSharedPointer<QCPAxisTicker>::create());
    y->rescale();
    if (log) { // a single element (an outlier's bin) stands half a decade above the axis
        y->setRangeLower(0.5);
        y->setRangeUpper(std::max(y->range().upper * 2, 10.0));
    } else {
        y->setRangeLower(0);
    }
}

void PlotPage::resetRanges(QCustomPlot* plot) {
    // QCustomPlot's own starting ranges; the last tensor's would otherwise frame an empty plot, and a
    // rescale over data of no width keeps the width it had (QCPAxis::rescale).
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis})
        axis->setRange(axis->scaleType() == QCPAxis::stLogarithmic ? QCPRange(0.5, 5) : QCPRange(0, 5));
}

void PlotPage::setNote(const QString& text) {
    m_note->setText(text);
    m_note->setVisible(!text.isEmpty());
    fitNote();
}

// A word-wrapped label's minimum height is not that of its lines at its width, so a short page would
// squeeze the note under the plots; it is kept at what the lines need, and the plots give way.
// (QLabel::heightForWidth answers for the width its size hint prefers, not the one asked for, once
// the text is rich: the lines are laid out here instead.)
void PlotPage::fitNote() {
    const QString text = m_note->text();
    int needed = 0;
    if (!text.isEmpty()) {
        QTextDocument lines;
        lines.setDocumentMargin(0);
        lines.setDefaultFont(m_note->font());
        if (Qt::mightBeRichText(text))
            lines.setHtml(text);
        else
            lines.setPlainText(text);
        lines.setTextWidth(std::max(m_note->contentsRect().width(), 40));
        needed = static_cast<int>(std::ceil(lines.size().height())) + m_note->height() -
                 m_note->contentsRect().height();
    }
    if (needed != m_note->minimumHeight()) m_note->setMinimumHeight(needed);
}

bool PlotPage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_note && event->type() == QEvent::Resize) fitNote();
    return QWidget::eventFilter(watched, event);
}

QCPGraph* PlotPage::addHistogram(QCustomPlot* plot, const Histogram& h, const QColor& color,
                                 const QString& name, bool dropZeros) {
    const auto edges = h.edges();
    const auto& counts = h.counts();
    QVector<double> keys;
    QVector<double> values;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        keys << edges[i];
        const double c = static_cast<double>(counts[i]);
        values << (dropZeros && c == 0 ? std::nan("") : c);
    }
    if (!counts.empty()) { // close the last step at the right edge
        keys << edges.back();
        values << values.back();
    }
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setPen(QPen(color, 1.2));
    QColor fill = color;
    fill.setAlpha(60);
    g->setBrush(fill);
    g->setData(keys, values, true);
    return g;
}

void PlotPage::clear(const QString& message) {
    for (std::size_t i = 0; i < m_plots.size(); ++i) {
        QCustomPlot* p = m_plots[i];
        setTitle(p, m_titles[i]); // a title naming the last tensor must not outlive its plot
        p->clearPlottables();
        p->clearItems();
        resetRanges(p);
        p->legend->setVisible(false);
        p->replot();
    }
    setNote(message);
}

bool PlotPage::exportTo(const QString& path) const {
    const QString lower = path.toLower();
    if (lower.endsWith(QStringLiteral(".svg"))) {
        // Vector output: each plot paints itself through QCustomPlot's own painter, at its place.
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(size());
        svg.setViewBox(rect());
        svg.setTitle(QStringLiteral("QuantLens"));
        QCPPainter painter;
        if (!painter.begin(&svg)) return false;
        for (QCustomPlot* p : m_plots) {
            painter.save();
            painter.translate(p->mapTo(const_cast<PlotPage*>(this), QPoint(0, 0)));
            p->toPainter(&painter, p->width(), p->height());
            painter.restore();
        }
        return painter.end();
    }
    if (lower.endsWith(QStringLiteral(".pdf"))) {
        if (m_plots.size() == 1) return m_plots.front()->savePdf(path);
        QPdfWriter pdf(path);
        pdf.setResolution(96);
        pdf.setPageSize(QPageSize(QSizeF(width(), height()), QPageSize::Point));
        pdf.setPageMargins(QMarginsF());
        QPainter painter(&pdf);
        if (!painter.isActive()) return false;
        const_cast<PlotPage*>(this)->render(&painter);
        return true;
    }
    if (m_plots.size() == 1 && lower.endsWith(QStringLiteral(".png")))
        return m_plots.front()->savePng(path, 0, 0, 2.0);
    if (m_plots.size() == 1 &&
        (lower.endsWith(QStringLiteral(".jpg")) || lower.endsWith(QStringLiteral(".jpeg"))))
        return m_plots.front()->saveJpg(path, 0, 0, 2.0);
    return const_cast<PlotPage*>(this)->grab().save(path);
}

} // namespace ql
