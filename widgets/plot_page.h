#pragma once
// Base of the result pages: holds QCustomPlots, exports them, and offers the drawing helpers
// every page shares. Pages draw core results as given; they compute nothing.
#include <QColor>
#include <QString>
#include <QWidget>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QLabel;
class QVBoxLayout;

namespace ql {

class Histogram;
struct TensorOutcome;

/// Colours used for A and B throughout, and for clipping.
namespace colors {
inline QColor a() {
    return QColor(31, 119, 180);
}
inline QColor b() {
    return QColor(255, 127, 14);
}
inline QColor clipped() {
    return QColor(214, 39, 40);
}
inline QColor grid() {
    return QColor(120, 120, 120, 90);
}
} // namespace colors

class PlotPage : public QWidget {
    Q_OBJECT
public:
    explicit PlotPage(QWidget* parent = nullptr);

    /// Draws a finished run; every page takes the same outcome.
    virtual void setOutcome(const TensorOutcome& outcome) = 0;
    /// Empties the plots and shows `message` (no result yet, or the page has nothing to show).
    virtual void clear(const QString& message);

    /// Writes the page: .png / .jpg raster, .pdf vector (single-plot pages) or raster. False on failure.
    bool exportTo(const QString& path) const;
    const std::vector<QCustomPlot*>& plots() const { return m_plots; }
    QLabel* note() const { return m_note; }

    /// A step outline of a histogram (edges in value units), filled. Other pages draw with it too.
    static QCPGraph* addHistogram(QCustomPlot* plot, const Histogram& h, const QColor& color,
                                  const QString& name, bool dropZeros = false);
    /// A title above the plot, shortened in the middle to the plot's width.
    static void setTitle(QCustomPlot* plot, const QString& title);
    /// A title naming a tensor: `title` holds %1 where `name` goes; a long name is shortened as
    /// elideName does, so the plots of two tensors differing in one part read apart.
    static void setTitle(QCustomPlot* plot, const QString& title, const QString& name);
    /// The title as shown, shortened or not (tests).
    static QString titleText(const QCustomPlot* plot);
    /// Counts on a logarithmic y axis (a single element stays visible beside millions) or a linear
    /// one from 0; the y range is fitted to the data either way.
    static void setCountScale(QCustomPlot* plot, bool log);
    /// Both axes back to the ranges of a plot that never showed anything.
    static void resetRanges(QCustomPlot* plot);
    /// Each replot gives both axes as many ticks as their labels have room for at the plot's size
    /// (every page's plots have it; a plot made elsewhere asks for it).
    static void fitTicksOnReplot(QCustomPlot* plot);

protected:
    QCustomPlot* addPlot(const QString& title, const QString& tooltip);
    void setNote(const QString& text);
    bool eventFilter(QObject* watched, QEvent* event) override;

    QVBoxLayout* m_layout;

private:
    void fitNote();
    void placeLegendUnderTitle(QCustomPlot* plot);

    std::vector<QCustomPlot*> m_plots;
    std::vector<QString> m_titles; // each plot's title before a result names its tensor
    QLabel* m_note;
};

} // namespace ql
