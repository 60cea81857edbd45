#pragma once
// The selected tensor's view: the headline strip and the result pages (values, error, clipping,
// timing, A vs B), the values preview shown on selection, and the run that fills them.
#include "io/export.h"
#include "job/job.h"

#include <QObject>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

class QWidget;

namespace ql {

class HeadlineStrip;
class PlotPage;
class ValueHistogramPage;
class Workbench;

class TensorView : public QObject {
    Q_OBJECT
public:
    /// Makes the pages as children of `window`, which lays them out.
    TensorView(Workbench* bench, QWidget* window);

    HeadlineStrip* headline() const { return m_headline; }
    /// Values, error, then the tabbed ones (clipping, timing, A vs B).
    const std::vector<PlotPage*>& pages() const { return m_pages; }
    /// The tabbed pages' titles, in pages()' order from the third.
    QStringList tabTitles() const;

    /// A tensor was selected: the configuration panel plans for it (its shape and role), and its values
    /// preview shows (the other pages wait for a run).
    void select(const TensorInfo& info);
    /// Quantizes `tensor` of the open model with the panel's settings (or explains inline why not).
    void quantize(const std::string& tensor);
    /// Shows a finished run (or one read from a report) on every page.
    void show(std::shared_ptr<const TensorOutcome> outcome);
    /// Empties every page and shows `message` on them.
    void clear(const QString& message);
    std::shared_ptr<const TensorOutcome> outcome() const { return m_outcome; }
    /// Exports the last run's tensor (side A) through the runner (widgets/weights_export.h).
    bool exportWeights(const QString& path, ExportLayout layout = ExportLayout::CompressedTensors);

signals:
    /// A run's result is on every page.
    void shown();

private:
    void markStale();

    Workbench* m_bench;
    HeadlineStrip* m_headline;
    ValueHistogramPage* m_values;
    std::vector<PlotPage*> m_pages;
    std::shared_ptr<const TensorOutcome> m_outcome;
    std::optional<JobRequest> m_request; // what made m_outcome: an export repeats it
};

} // namespace ql
