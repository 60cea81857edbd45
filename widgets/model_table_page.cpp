#include "widgets/model_table_page.h"

#include "base/error.h"
#include "base/whole_number.h"
#include "io/printable.h"
#include "job/report_parts.h"
#include "job/run_notes.h"
#include "report/check.h"
#include "report/model_summary.h"
#include "report/report.h"
#include "report/report_read.h"
#include "widgets/config_panel.h"
#include "widgets/job_runner.h"
#include "widgets/model_table_model.h"
#include "widgets/qt_util.h"
#include "widgets/result_table.h"
#include "widgets/weights_export.h"
#include "widgets/workbench.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>
#include <map>

namespace ql {

ModelTablePage::ModelTablePage(Workbench* bench, QWidget* parent)
    : QWidget(parent)
    , m_bench(bench)
    , m_model(new ModelTableModel(this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this)) {
    m_filter = filterResultRows(m_view, m_model, ModelTableModel::NameColumn);
    m_view->setSortingEnabled(true);
    m_view->horizontalHeader()->setSortIndicator(ModelTableModel::SqnrColumn, Qt::AscendingOrder);
    m_view->setColumnHidden(ModelTableModel::WeightedSqnrColumn, true); // until a run has importance
    styleResultTable(m_view); // one line per tensor: the reason a tensor failed is in its tooltip
    m_view->setToolTip(
        tr("Every tensor quantized with the current spec, worst SQNR first; double-click a row to "
           "open that tensor"));
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        emit tensorActivated(i.data(ModelTableModel::TensorNameRole).toString());
    });
    connect(this, &ModelTablePage::tensorActivated, this, &ModelTablePage::activate);
    connect(bench, &Workbench::sourceChanged, this, [this] {
        m_outcome.reset();
        m_request.reset();
        m_report.reset();
        clear(tr("Run ▸ Quantize all (Ctrl+Shift+R) fills this table with every tensor of %1.")
                  .arg(m_bench->fileName()));
    });
    clear(tr("Run ▸ Quantize all fills this table."));
    m_summary->setTextFormat(Qt::PlainText); // tensor names and reasons: never read as HTML
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_filter->setMaximumWidth(320);
    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(m_filter);
    filterRow->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_summary);
    layout->addLayout(filterRow);
    layout->addWidget(m_view, 1);
}

void ModelTablePage::setRows(std::vector<ModelRow> rows, const std::string& overall) {
    int failed = 0, kept = 0;
    for (const auto& r : rows) {
        failed += !r.error.empty();
        kept += !r.kept.empty();
    }
    const int n = static_cast<int>(rows.size());
    const bool weighted = anyWeighted(rows);
    m_model->setRows(std::move(rows)); // ranked by the weighted SQNR when there is one
    m_view->setColumnHidden(ModelTableModel::WeightedSqnrColumn, !weighted);
    fitResultColumns(m_view, {ModelTableModel::NameColumn});
    m_view->horizontalHeader()->setSortIndicator(
        weighted ? ModelTableModel::WeightedSqnrColumn : ModelTableModel::SqnrColumn, Qt::AscendingOrder);
    QString text = tr("%n tensor(s) quantized", nullptr, n - failed - kept);
    if (failed) text += tr("; %n failed (shown first, reason in the last column)", nullptr, failed);
    if (kept)
        text +=
            tr("; %n kept unquantized: the spec does not apply to them (shown last, an export copies them "
               "as they are)",
               nullptr, kept);
    text += QLatin1Char('.');
    // Line by line: printable() would show the line breaks as escapes.
    for (const QString& line : qs(overall).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        text += QLatin1Char('\n') + qs(printable(ss(line)));
    m_summary->setText(text);
}

QString ModelTablePage::summaryText() const {
    return m_summary->text();
}

void ModelTablePage::clear(const QString& message) {
    m_model->setRows({});
    m_summary->setText(message);
}

bool ModelTablePage::exportTo(const QString& path) const {
    // Every row the table shows (through its filter) in the current order, not the part scrolled into
    // view: a view of its own, sized to hold them all, drawn off screen (an image taller than a painter
    // can address is refused).
    constexpr int kMaxRows = 1500;
    const int rows = m_view->model()->rowCount();
    if (rows > kMaxRows) return false;
    QTableView all;
    all.setModel(m_view->model());
    all.setWordWrap(false);
    all.setAlternatingRowColors(true);
    all.verticalHeader()->setVisible(false);
    all.verticalHeader()->setDefaultSectionSize(m_view->verticalHeader()->defaultSectionSize());
    all.setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    all.setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    const int height = 2 * all.frameWidth() + m_view->horizontalHeader()->height() +
                       rows * m_view->verticalHeader()->defaultSectionSize();
    all.horizontalHeader()->setFixedHeight(m_view->horizontalHeader()->height());
    all.resize(m_view->width(), height); // every row in view, so the name column fits them all
    for (int c = 0; c < m_view->model()->columnCount(); ++c)
        all.setColumnWidth(c, m_view->columnWidth(c));
    all.resizeColumnToContents(ModelTableModel::NameColumn); // whole names: an image has no tooltip
    int width = 2 * all.frameWidth();
    for (int c = 0; c < m_view->model()->columnCount(); ++c)
        width += all.columnWidth(c);
    all.resize(width, height);
    return all.grab().save(path);
}

void ModelTablePage::quantizeAll() {
    if (!m_bench->source()) return m_bench->showMessage(tr("Open a model file first (Ctrl+O)."), true);
    m_bench->showMessage({}, false);
    m_request = m_bench->request();
    m_weightsOnly = !m_bench->config()->includeNonWeights(); // as quantlens-cli quantize --all
    JobHandle* job =
        m_bench->runner()->run([request = *m_request, weightsOnly = m_weightsOnly](const ProgressFn& fn) {
            ModelJobOptions options;
            options.keepCodes = true; // for File ▸ Export
            options.weightsOnly = weightsOnly;
            return runModelJob(request, selectTensors(*request.source, {{}, {}, true}), options,
                               progressOverTensors(fn));
        });
    job->onFinished<ModelOutcome>(this, [this](std::shared_ptr<const ModelOutcome> o) {
        showRun(std::move(o));
        // The run's notes, in the words quantlens-cli prints them (core/job/run_notes.h).
        std::vector<RunNote> notes = importanceNotes(m_outcome->reports);
        for (RunNote& note : calibrationNotes(m_outcome->reports))
            notes.push_back(std::move(note));
        QStringList lines;
        for (const RunNote& note : notes)
            lines << qs(
                printable(noteText(m_bench->source() ? m_bench->source()->path() : std::string(), note)));
        if (!lines.isEmpty()) m_bench->showMessage(lines.join(QLatin1Char('\n')), false);
        m_bench->raise(this);
        emit shown();
    });
}

void ModelTablePage::showRun(std::shared_ptr<const ModelOutcome> outcome) {
    m_outcome = std::move(outcome);
    m_report.reset();
    // The whole model in a few lines, from the reports as core sums them (report/model_summary.h).
    setRows(
        modelRows(m_outcome->reports),
        ql::summaryText(summarizeModel(m_outcome->reports, m_request ? m_request->source.get() : nullptr)));
}

bool ModelTablePage::exportWeights(const QString& path, ExportLayout layout) {
    if (!m_outcome || !m_request) {
        m_bench->showMessage(tr("Nothing to export yet: run Quantize selected or Quantize all first."), true);
        return false;
    }
    return startWeightsExport(
        *m_bench, *m_request, std::string(), path,
        [this](std::shared_ptr<const ModelOutcome> o) { showRun(std::move(o)); }, m_weightsOnly, layout);
}

void ModelTablePage::activate(const QString& name) {
    if (!m_report) return emit runRequested(name);
    for (const auto& entry : *m_report) {
        if (!entry.is_object() || entry.value("name", std::string()) != ss(name)) continue;
        try {
            TensorReport r = reportFromJson(entry);
            if (!r.quantized()) {
                m_bench->showMessage(
                    tr("%1: %2").arg(name,
                                     qs(r.error.empty() ? "kept unquantized: " + r.passedThrough : r.error)),
                    !r.error.empty());
                return;
            }
            auto outcome = std::make_shared<TensorOutcome>();
            outcome->a.label = r.backend;
            outcome->a.report = std::move(r);
            emit reportedTensorActivated(std::move(outcome));
            m_bench->showStatus(tr("%1 from the report %2").arg(name, QFileInfo(m_reportPath).fileName()));
        } catch (const std::exception& e) {
            m_bench->showMessage(tr("%1 in %2: %3").arg(name, m_reportPath, qs(e.what())), true);
        }
        return;
    }
}

bool ModelTablePage::isReportPath(const QString& path) {
    const QString name = QFileInfo(path).fileName().toLower();
    return name.endsWith(QStringLiteral(".json")) && !name.endsWith(QStringLiteral(".index.json")) &&
           !name.endsWith(QStringLiteral(".qlsession.json"));
}

namespace {

// A report's whole model in a few lines, as after a run: its entries through core's summary.
std::string reportSummary(const nlohmann::json& tensors) {
    std::vector<TensorReport> reports;
    reports.reserve(tensors.size());
    try {
        for (const auto& entry : tensors)
            reports.push_back(reportFromJson(entry));
    } catch (const std::exception& e) { // the table still shows what the entries hold
        return std::string("No summary: ") + e.what();
    }
    return summaryText(summarizeModel(reports));
}

} // namespace

bool ModelTablePage::openReport(const QString& path) {
    nlohmann::json report;
    std::vector<ModelRow> rows;
    try {
        report = readReportFile(ss(path));
        if (!report.is_object() || !report.contains("tensors"))
            throw FileError(ss(path) + ": not a QuantLens report (no \"tensors\" list)");
        rows = modelRows(report["tensors"], ss(path));
    } catch (const std::exception& e) {
        m_bench->showMessage(tr("Could not open %1:\n%2").arg(path, qs(e.what())), true);
        return false;
    }
    const std::string overall = reportSummary(report["tensors"]);
    m_report = std::make_shared<const nlohmann::json>(std::move(report["tensors"]));
    m_reportPath = path;
    m_outcome.reset();
    setRows(std::move(rows), overall);
    m_bench->raise(this);
    emit reportOpened();
    QString what = tr("Report %1: %2 tensors of %3.")
                       .arg(QFileInfo(path).fileName())
                       .arg(m_report->size())
                       .arg(qs(report.value("file", std::string("?"))));
    if (report.contains("shard") && report["shard"].is_object())
        what += tr(" A part: shard %1 of %2 (merge the parts with quantlens-cli merge).")
                    .arg(wholeNumber(report["shard"].value("index", nlohmann::json())).value_or(-1))
                    .arg(wholeNumber(report["shard"].value("count", nlohmann::json())).value_or(0));
    m_bench->showMessage(what, false);
    emit shown();
    return true;
}

bool ModelTablePage::checkRules(const QString& rulesPath) {
    if (!m_outcome && !m_report) {
        m_bench->showMessage(
            tr("Quantize all (or open a report) first: the rules check the whole-model table."), true);
        return false;
    }
    try {
        // The run's results as they are; an opened report read once, as `quantlens-cli check` reads it.
        const CheckReport report =
            m_outcome ? checkReportOf(m_bench->source() ? m_bench->source()->path() : std::string(),
                                      m_outcome->reports)
                      : checkReportOf(nlohmann::json{{"file", ss(m_reportPath)}, {"tensors", *m_report}});
        const std::vector<CheckRule> rules = readRules(ss(rulesPath));
        const CheckResult result = runChecks(report, rules);
        // Every failure, one line per subject with each rule it broke; the tensors' rows are marked.
        QStringList failing;
        std::map<std::string, std::vector<std::string>> marks;
        int checked = 0;
        for (const auto& subject : result.subjects) {
            checked += subject.status != "kept";
            if (subject.status != "fail") continue;
            QStringList broken;
            for (const std::string& f : subject.failures)
                broken << qs(printable(f));
            if (broken.isEmpty()) broken << tr("failed");
            failing << tr("%1: %2").arg(qs(printable(subject.name)), broken.join(QStringLiteral("; ")));
            if (subject.entry >= 0 && static_cast<std::size_t>(subject.entry) < report.tensors.size())
                marks[report.tensors[static_cast<std::size_t>(subject.entry)].name] = subject.failures;
        }
        m_model->setCheckFailures(marks);
        if (failing.isEmpty()) {
            m_bench->showMessage(tr("%1: all %n checked subject(s) pass its %2 rule(s).", nullptr, checked)
                                     .arg(QFileInfo(rulesPath).fileName())
                                     .arg(rules.size()),
                                 false);
            return true;
        }
        m_bench->showMessage(
            tr("%1: %n of %2 fail (quantlens-cli check gives the same verdict; failing rows are marked "
               "red):\n",
               nullptr, static_cast<int>(failing.size()))
                    .arg(QFileInfo(rulesPath).fileName())
                    .arg(checked) +
                failing.join(QLatin1Char('\n')),
            true);
    } catch (const std::exception& e) {
        m_bench->showMessage(tr("Could not check %1:\n%2").arg(rulesPath, qs(e.what())), true);
    }
    return false;
}

} // namespace ql
