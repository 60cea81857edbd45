#pragma once
// The model-wide table page: every tensor's headline numbers, worst first; double-click opens one.
// It runs the whole model (Run ▸ Quantize all), shows a report written earlier, checks the CI gate's
// rules on either, and exports the run's weights.
#include "io/export.h"
#include "job/job.h"
#include "report/model_table.h"

#include <QWidget>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

class QLabel;
class QLineEdit;
class QTableView;

namespace ql {

class ModelTableModel;
class Workbench;

class ModelTablePage : public QWidget {
    Q_OBJECT
public:
    ModelTablePage(Workbench* bench, QWidget* parent);
    /// Shows `rows` worst first; `overall` (summaryText of the run, may be empty) goes under the counts.
    void setRows(std::vector<ModelRow> rows, const std::string& overall = {});
    /// No rows, and `message` where the summary goes (a model just opened, before any run).
    void clear(const QString& message);
    ModelTableModel* model() const { return m_model; }
    /// The table as shown: through the name filter (filterBox()), so rows are the filter's.
    QTableView* view() const { return m_view; }
    QLineEdit* filterBox() const { return m_filter; }
    QString summaryText() const;
    bool exportTo(const QString& path) const;

    /// Quantizes every tensor of the open model with the panel's settings.
    void quantizeAll();
    /// The last whole-model run's outcome (without codes once exported); null when the table shows
    /// none (nothing run, or a report).
    const std::shared_ptr<const ModelOutcome>& outcome() const { return m_outcome; }
    /// Exports the table's run through the runner (widgets/weights_export.h): the table then shows what
    /// the export holds, so its report agrees with it.
    bool exportWeights(const QString& path, ExportLayout layout = ExportLayout::CompressedTensors);

    /// True for a name that reads as a JSON report (not a sharded index, not a session).
    static bool isReportPath(const QString& path);
    /// Shows a report written earlier (by either front end, or merged from shards) as a run of the
    /// whole model shows: the table worst first; activating a row shows every plot the report carries
    /// for that tensor (reportedTensorActivated). The open model, if any, stays open.
    bool openReport(const QString& path);
    /// The CI gate's rules file (quantlens-cli check --rules) on the whole-model result or the opened
    /// report: true when every tensor passes; every failure is in the message bar and the failing
    /// tensors' rows are marked (ModelTableModel::setCheckFailures).
    bool checkRules(const QString& rulesPath);

signals:
    /// A row was activated (double-clicked): a report's row shows what the report holds
    /// (reportedTensorActivated), a run's row asks for the tensor's run (runRequested).
    void tensorActivated(const QString& name);
    /// The window selects the tensor `name` of the open model and runs it.
    void runRequested(const QString& name);
    /// A row of an opened report was activated: its tensor's results as the report has them.
    void reportedTensorActivated(std::shared_ptr<const ql::TensorOutcome> outcome);
    /// A report now fills the table (the tensor pages wait for a row).
    void reportOpened();
    /// A whole-model run (or a report) filled the table.
    void shown();

private:
    void showRun(std::shared_ptr<const ModelOutcome> outcome);
    void activate(const QString& name);

    Workbench* m_bench;
    std::shared_ptr<const ModelOutcome> m_outcome;
    std::optional<JobRequest> m_request;            // what made m_outcome: an export repeats it
    bool m_weightsOnly = true;                      // m_outcome kept what is no weight, likewise
    std::shared_ptr<const nlohmann::json> m_report; // the opened report's "tensors", while its table shows
    QString m_reportPath;
    ModelTableModel* m_model;
    QTableView* m_view;
    QLineEdit* m_filter = nullptr;
    QLabel* m_summary;
};

} // namespace ql
