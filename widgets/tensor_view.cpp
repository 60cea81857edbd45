#include "widgets/tensor_view.h"

#include "widgets/clipping_page.h"
#include "widgets/comparison_page.h"
#include "widgets/config_panel.h"
#include "widgets/headline_strip.h"
#include "widgets/histogram_pages.h"
#include "widgets/job_runner.h"
#include "widgets/qt_util.h"
#include "widgets/timing_page.h"
#include "widgets/weights_export.h"
#include "widgets/workbench.h"

#include <QStringList>

namespace ql {

TensorView::TensorView(Workbench* bench, QWidget* window)
    : QObject(window)
    , m_bench(bench)
    , m_headline(new HeadlineStrip(window))
    , m_values(new ValueHistogramPage(window)) {
    m_pages = {m_values, new ErrorHistogramPage(window), new ClippingPage(window), new TimingPage(window),
               new ComparisonPage(window)};
    connect(bench->config(), &ConfigPanel::specChanged, this, &TensorView::markStale);
    connect(bench, &Workbench::sourceChanged, this, [this] {
        m_outcome.reset();
        m_request.reset();
        clear(tr("Select a tensor and run (Ctrl+R)."));
    });
}

QStringList TensorView::tabTitles() const {
    return {tr("Clipping && SQNR per group"), tr("Timing"), tr("A vs B")};
}

void TensorView::markStale() {
    // A result stays on screen after a setting changes, marked as no longer what the panel says.
    if (!m_outcome) return;
    const ConfigPanel* config = m_bench->config();
    const SideOutcome& a = m_outcome->a;
    QStringList changed;
    // The plan's spec: a role's axis (or a conv's view) is what the panel plans too.
    if (a.report.plan.spec != (config->plan() ? config->plan()->spec : config->spec()))
        changed << tr("the spec");
    if (a.report.backend != config->backend()) changed << tr("the backend");
    if (m_outcome->b.has_value() != (config->compare().kind != CompareWith::Kind::None))
        changed << tr("the comparison");
    m_headline->setStale(changed.isEmpty() ? QString()
                                           : tr("%1 changed since this run.").arg(changed.join(tr(" and "))));
}

void TensorView::select(const TensorInfo& info) {
    const QString name = qs(info.name);
    // The panel plans for this tensor as a run will: its shape and its role in the model.
    if (m_bench->source()) m_bench->config()->setShape(info.shape, roleOf(*m_bench->source(), info));
    if (!m_outcome || m_outcome->a.report.name != info.name) {
        m_headline->clear();
        for (PlotPage* p : m_pages)
            if (p != m_values)
                p->clear(tr("Run (Ctrl+R) to quantize %1.").arg(name)); // the values preview stays
    }
    if (!isFloating(info.dtype)) {
        m_values->clear(
            tr("%1 is %2, not a floating tensor: nothing to quantize.").arg(name, qs(nameOf(info.dtype))));
        return;
    }
    JobHandle* job = m_bench->runner()->run([source = m_bench->source(), tensor = info.name](
                                                const ProgressFn&) { return previewValues(*source, tensor); },
                                            JobRunner::Lane::Preview);
    job->onFinished<ValuePreview>(
        this, [this](const std::shared_ptr<const ValuePreview>& p) { m_values->setPreview(*p); });
}

void TensorView::quantize(const std::string& tensor) {
    const ConfigPanel* config = m_bench->config();
    if (!m_bench->source()) return m_bench->showMessage(tr("Open a model file first (Ctrl+O)."), true);
    if (tensor.empty()) return m_bench->showMessage(tr("Select a tensor in the browser first."), true);
    if (!config->plan() || !config->problem().isEmpty()) // side B's problems too, before any work
        return m_bench->showMessage(tr("Cannot quantize %1: %2").arg(qs(tensor), config->problem()), true);
    m_bench->showMessage({}, false);
    m_request = m_bench->request();
    JobHandle* job = m_bench->runner()->run(
        [request = *m_request, tensor](const ProgressFn& fn) { return runTensorJob(request, tensor, fn); });
    job->onFinished<TensorOutcome>(this,
                                   [this](std::shared_ptr<const TensorOutcome> o) { show(std::move(o)); });
}

void TensorView::show(std::shared_ptr<const TensorOutcome> outcome) {
    m_outcome = std::move(outcome);
    m_headline->setOutcome(*m_outcome);
    for (PlotPage* p : m_pages)
        p->setOutcome(*m_outcome);
    m_bench->showStatus(tr("%1 quantized: %2")
                            .arg(qs(m_outcome->a.report.name), qs(describe(m_outcome->a.report.plan.spec))));
    if (const std::string& note = m_outcome->a.report.params.calibrationNote; !note.empty())
        m_bench->showMessage(tr("Calibration: %1").arg(qs(note)),
                             false); // far worse than absmax: said where it shows
    emit shown();
}

void TensorView::clear(const QString& message) {
    m_headline->clear();
    for (PlotPage* p : m_pages)
        p->clear(message);
}

bool TensorView::exportWeights(const QString& path, ExportLayout layout) {
    if (!m_request || !m_outcome) {
        m_bench->showMessage(tr("Nothing to export yet: run Quantize selected or Quantize all first."), true);
        return false;
    }
    return startWeightsExport(*m_bench, *m_request, m_outcome->a.report.name, path, {}, false, layout);
}

} // namespace ql
