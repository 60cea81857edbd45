#include "widgets/plan_page.h"

#include "io/printable.h"
#include "job/plan_output.h"
#include "job/report_parts.h"
#include "widgets/config_panel.h"
#include "widgets/job_runner.h"
#include "widgets/plan_table_model.h"
#include "widgets/plot_page.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"
#include "widgets/result_table.h"
#include "widgets/save_file.h"
#include "widgets/workbench.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <filesystem>

namespace ql {
PlanPage::PlanPage(Workbench* bench, QWidget* parent)
    : QWidget(parent)
    , m_bench(bench)
    , m_formats(new QToolButton(this))
    , m_budget(new QDoubleSpinBox(this))
    , m_measure(new QPushButton(tr("Measure formats"), this))
    , m_summary(new QLabel(this))
    , m_plot(new QCustomPlot(this))
    , m_model(new PlanTableModel(this))
    , m_view(new QTableView(this)) {
    // Formats: every default candidate, checkable; all checked.
    m_formats->setText(tr("Formats"));
    m_formats->setPopupMode(QToolButton::InstantPopup);
    m_formats->setToolTip(tr("The formats the plan chooses from, each with its operator's exact arithmetic"));
    auto* menu = new QMenu(m_formats);
    for (const auto& c : defaultPlanCandidates()) {
        QAction* a = menu->addAction(qs(c.name));
        a->setCheckable(true);
        a->setChecked(true);
        a->setToolTip(c.spec ? qs(describe(*c.spec)) : tr("kept as stored"));
    }
    menu->setToolTipsVisible(true);
    m_formats->setMenu(menu);

    m_budget->setRange(0.5, 64);
    m_budget->setDecimals(3);
    m_budget->setSingleStep(0.25);
    m_budget->setValue(4.5);
    m_budget->setSuffix(tr(" bits/weight"));
    m_budget->setToolTip(tr("Budget: the average bits per planned weight, codes, scales and zero points as a "
                            "compressed-tensors checkpoint stores them"));
    connect(m_budget, &QDoubleSpinBox::valueChanged, this, [this] { choose(); });
    m_measure->setToolTip(tr("Quantize every 2-D weight with each checked format on the selected backend "
                             "(with File ▸ Open importance, the error is importance-weighted)"));
    connect(m_measure, &QPushButton::clicked, this, &PlanPage::measure);
    connect(bench, &Workbench::sourceChanged, this, [this] {
        clear(tr("Measure formats to plan a mixed-precision checkpoint of %1.").arg(m_bench->fileName()));
    });

    auto* controls = new QHBoxLayout;
    controls->addWidget(m_formats);
    controls->addWidget(m_measure);
    controls->addWidget(new QLabel(tr("Budget:"), this));
    controls->addWidget(m_budget);
    controls->addStretch(1);
    auto* exportRow = new QHBoxLayout; // a row of its own: the tab stays usable in a narrow window
    exportRow->addWidget(new QLabel(tr("Export:"), this));
    const struct {
        QString label, tip;
        std::function<void()> action;
    } exports[] = {
        {tr("Rules…"), tr("llama-quantize --tensor-type-file rules"),
         [this] {
             saveAs(tr("llama.cpp rules"), tr("Text (*.txt)"), &PlanPage::writeRules,
                    [this] { return llamaTensorTypeRules(*m_measurements, *m_result).notes; });
         }},
        {tr("Recipe…"), tr("An llm-compressor recipe (YAML)"),
         [this] {
             saveAs(tr("llm-compressor recipe"), tr("YAML (*.yaml)"), &PlanPage::writeRecipe,
                    [this] { return llmCompressorRecipe(*m_measurements, *m_result).notes; });
         }},
        {tr("Plan file…"), tr("The measurements and the choice as JSON (quantlens-cli plan --from reads it)"),
         [this] { saveAs(tr("plan file"), tr("JSON (*.json)"), &PlanPage::writePlanFile); }},
        {tr("Export weights…"), tr("A compressed-tensors checkpoint with each weight in its chosen format"),
         [this] {
             const QString path =
                 saveFileName(this, tr("Export the planned weights"), tr("safetensors (*.safetensors)"));
             if (!path.isEmpty()) exportWeights(path);
         }},
    };
    for (const auto& e : exports) {
        auto* b = new QPushButton(e.label, this);
        b->setToolTip(e.tip);
        b->setEnabled(false);
        connect(b, &QPushButton::clicked, this, e.action);
        exportRow->addWidget(b);
        m_exports.push_back(b);
    }

    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_plot->setMinimumHeight(160);
    m_plot->xAxis->setLabel(tr("bits per weight"));
    m_plot->yAxis->setLabel(tr("total squared error"));
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    PlotPage::fitTicksOnReplot(m_plot);
    m_plot->setToolTip(tr("The least total error any choice of formats reaches at each size (the front); the "
                          "red point is the plan for the budget"));

    m_filter = filterResultRows(m_view, m_model, PlanTableModel::NameColumn);
    m_filter->setMaximumWidth(320);
    styleResultTable(m_view);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_view);
    split->addWidget(m_plot);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    exportRow->addStretch(1);
    layout->addLayout(controls);
    layout->addLayout(exportRow);
    layout->addWidget(m_summary);
    layout->addWidget(m_filter, 0, Qt::AlignLeft);
    layout->addWidget(split, 1);
    clear(tr("Measure formats to plan a mixed-precision checkpoint under a budget."));
}

std::vector<PlanCandidate> PlanPage::candidates() const {
    std::vector<std::string> names;
    for (QAction* a : m_formats->menu()->actions())
        if (a->isChecked()) names.push_back(ss(a->text()));
    return planCandidatesNamed(names);
}

void PlanPage::setCandidatesChecked(const QStringList& names) {
    for (QAction* a : m_formats->menu()->actions())
        a->setChecked(names.contains(a->text()));
}

double PlanPage::budget() const {
    return m_budget->value();
}
void PlanPage::setBudget(double bitsPerWeight) {
    m_budget->setValue(bitsPerWeight);
}

void PlanPage::clear(const QString& message) {
    m_measurements.reset();
    m_front.clear();
    m_result.reset();
    m_model->setPlan(nullptr, {});
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_plot->replot();
    m_summary->setText(message.toHtmlEscaped()); // rich text (the plan's figures in bold): names escaped
    for (auto* b : m_exports)
        b->setEnabled(false);
}

void PlanPage::setMeasurements(std::shared_ptr<const PlanMeasurements> m) {
    m_measurements = std::move(m);
    m_front = m_measurements ? planFrontOf(*m_measurements) : std::vector<FrontPoint>{};
    choose();
}

void PlanPage::choose() {
    if (!m_measurements) return;
    const PlanMeasurements& m = *m_measurements;
    try {
        m_result = choosePlan(m, {budget(), 0}, m_front);
    } catch (const std::exception& e) {
        m_result.reset();
        m_model->setPlan(nullptr, {});
        m_summary->setText(
            tr("%1 weights measured. %2").arg(m.tensors.size()).arg(qs(e.what()).toHtmlEscaped()));
        for (auto* b : m_exports)
            b->setEnabled(false);
        drawFront();
        return;
    }
    m_model->setPlan(m_measurements, *m_result);
    fitResultColumns(m_view, {PlanTableModel::NameColumn});
    const QString objective =
        m.importance.empty() ? tr("squared error") : tr("importance-weighted squared error");
    QString text =
        tr("<b>%1 bits per weight</b> (budget %2) over %3 weights, %4; total %5 %6 — the least of any "
           "choice within the budget")
            .arg(fmtNumber(m_result->bitsPerWeight(m), 4), fmtNumber(budget(), 4))
            .arg(m.tensors.size())
            .arg(fmtBytes(static_cast<double>(m_result->solution.bits) / 8), objective,
                 fmtNumber(m_result->solution.error, 4));
    if (!m_result->solution.exact)
        text += tr(" (sizes counted in units of %1 bits, rounded up)").arg(m_result->solution.unitBits);
    if (!m.notPlanned.empty())
        text += tr("; %n other tensor(s) kept as they are (listed last, with the reason)", nullptr,
                   int(m.notPlanned.size()));
    m_summary->setText(text + QLatin1Char('.'));
    for (auto* b : m_exports)
        b->setEnabled(true);
    drawFront();
}

void PlanPage::drawFront() {
    m_plot->clearGraphs();
    m_plot->clearItems();
    if (!m_measurements) return m_plot->replot();
    const double n = static_cast<double>(m_measurements->elements());
    const auto& front = m_front;
    QVector<double> x, y;
    for (const auto& p : front)
        if (p.error > 0) x << static_cast<double>(p.bits) / n, y << p.error; // a log axis cannot show 0
    QCPGraph* g = m_plot->addGraph();
    g->setData(x, y, true);
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    g->setPen(QPen(colors::a()));
    auto* budgetLine = new QCPItemStraightLine(m_plot);
    budgetLine->point1->setCoords(budget(), 1);
    budgetLine->point2->setCoords(budget(), 2);
    budgetLine->setPen(QPen(colors::grid(), 1, Qt::DashLine));
    if (m_result && m_result->solution.error > 0) {
        QCPGraph* chosen = m_plot->addGraph();
        chosen->setData({m_result->bitsPerWeight(*m_measurements)}, {m_result->solution.error});
        chosen->setLineStyle(QCPGraph::lsNone);
        chosen->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colors::clipped(), 9));
    }
    m_plot->yAxis->setLabel(m_measurements->importance.empty() ? tr("total squared error")
                                                               : tr("total weighted squared error"));
    m_plot->rescaleAxes();
    // The interesting part is near the budget: from the smallest plan to a few bits above it.
    const QCPRange r = m_plot->xAxis->range();
    const double lo = std::min(r.lower, budget()) - 0.25;
    m_plot->xAxis->setRange(lo, std::min(r.upper + 0.25, std::max(budget() + 4.0, lo + 4.0)));
    bool found = false;
    const QCPRange shown = g->getValueRange(found, QCP::sdPositive, m_plot->xAxis->range());
    if (found) m_plot->yAxis->setRange(shown.lower / 1.5, shown.upper * 1.5);
    m_plot->replot();
}

void PlanPage::saveAs(const QString& what, const QString& filter,
                      bool (PlanPage::*write)(const QString&, QString*) const,
                      const std::function<std::vector<std::string>()>& notes) {
    const QString path = saveFileName(this, tr("Save the %1").arg(what), filter);
    if (path.isEmpty()) return;
    QString error;
    if ((this->*write)(path, &error)) {
        QString text = tr("Wrote the %1 to %2.").arg(what, path);
        if (notes) // what its reader should know, as quantlens-cli plan notes it
            for (const std::string& note : notes())
                text += QLatin1Char('\n') + qs(printable(note));
        m_bench->showMessage(text, false);
    } else
        m_bench->showMessage(tr("Could not write the %1: %2").arg(what, error), true);
}

bool PlanPage::writeRules(const QString& path, QString* error) const {
    if (!m_result) return false;
    return writeTextFile(path, llamaTensorTypeRules(*m_measurements, *m_result).text, error);
}

bool PlanPage::writeRecipe(const QString& path, QString* error) const {
    if (!m_result) return false;
    return writeTextFile(path, llmCompressorRecipe(*m_measurements, *m_result).text, error);
}

bool PlanPage::writePlanFile(const QString& path, QString* error) const {
    if (!m_result) return false;
    return writeTextFile(path, planJson(*m_measurements, *m_result).dump(1) + "\n", error);
}

bool PlanPage::readPlanFile(const QString& path, QString* error) {
    try {
        setMeasurements(std::make_shared<const PlanMeasurements>(
            planMeasurementsFromJson(readReportFile(ss(path)), ss(path))));
        return true;
    } catch (const std::exception& e) {
        if (error) *error = qs(e.what());
        return false;
    }
}

void PlanPage::measure() {
    if (!m_bench->source()) return m_bench->showMessage(tr("Open a model file first (Ctrl+O)."), true);
    std::vector<PlanCandidate> chosen;
    try {
        chosen = candidates();
    } catch (const std::exception& e) {
        return m_bench->showMessage(qs(e.what()), true);
    }
    if (chosen.empty()) return m_bench->showMessage(tr("Check at least one format to plan with."), true);
    m_bench->showMessage({}, false);
    PlanScope scope;
    scope.includeNonWeights = m_bench->config()->includeNonWeights(); // as the CLI
    JobHandle* job =
        m_bench->runner()->run([request = m_bench->request(), chosen, scope](const ProgressFn& fn) {
            return measurePlan(request, selectTensors(*request.source, {{}, {}, true}), chosen,
                               progressOverTensors(fn), scope);
        });
    job->onFinished<PlanMeasurements>(this, [this](std::shared_ptr<const PlanMeasurements> m) {
        setMeasurements(std::move(m));
        // The notes quantlens-cli plan prints for the same measurements.
        QStringList notes;
        for (const std::string& note : planNotes(*m_measurements, m_measurements->file))
            notes << qs(printable(note));
        if (!notes.isEmpty()) m_bench->showMessage(notes.join(QLatin1Char('\n')), false);
        m_bench->raise(this);
        emit measured();
    });
}

bool PlanPage::exportWeights(const QString& path) {
    if (!m_bench->source() || !m_result) {
        m_bench->showMessage(tr("Measure formats and choose a budget that fits first."), true);
        return false;
    }
    const JobRequest r = m_bench->request();
    const std::string config = (std::filesystem::absolute(ss(path)).parent_path() / "config.json").string();
    if (m_bench->refuseOverInputs(
            r, {{ss(path), "the plan's export"}, {config, "the plan export's config.json"}}))
        return false;
    m_bench->showMessage({}, false);
    JobHandle* job = m_bench->runner()->run(
        [r, m = m_measurements, result = *m_result, target = ss(path)](const ProgressFn& fn) {
            return exportPlan(r, *m, result, target, progressOverTensors(fn));
        });
    job->onFinished<int>(this, [this, path](const std::shared_ptr<const int>& n) {
        m_bench->showMessage(
            tr("Wrote %1: %n weight(s) quantized as planned, with config.json beside it.", nullptr, *n)
                .arg(path),
            false);
        emit weightsExported(path, *n);
        m_bench->endJob(QString());
    });
    return true;
}

} // namespace ql
