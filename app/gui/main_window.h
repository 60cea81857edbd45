#pragma once
// The main window: a composition of pages (browser, configuration, result pages, model table)
// around one JobRunner. Pages own their models and wiring; the window connects them.
#include "gui/session.h"
#include "job/job.h"

#include <QMainWindow>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace ql {

class ConfigPanel;
class DiffPage;
class HeadlineStrip;
class JobRunner;
class ModelTablePage;
class PlanPage;
class PlotPage;
class TensorBrowser;
class ValueHistogramPage;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens a model file (or a JSON report: see openReport); on failure shows the reason and keeps
    /// the previous file. Returns success.
    bool openFile(const QString& path);
    /// Shows a report written earlier (by either front end, or merged from shards) as a run of the
    /// whole model shows: the table worst first; activating a row draws every plot the report
    /// carries for that tensor. The open model, if any, stays open.
    bool openReport(const QString& path);
    bool selectTensor(const QString& name);
    /// Quantizes the selected tensor (or explains inline why it cannot).
    void quantizeSelected();
    void quantizeAll();
    void cancel();

    // Exports without dialogs (the menu actions ask for the path, then call these). False + message on
    // failure. Every file written is refused over any input of the run (model, importance, scale file).
    /// Starts the export of the last result through the runner: the run is repeated for the target,
    /// so what it cannot store is kept unquantized and the table (and its report) says so. Ends with
    /// jobEnded (empty on success); false + message when refused before any work.
    bool exportWeights(const QString& path);
    bool exportReport(const QString& path);
    bool exportPlot(const QString& path);
    bool saveSessionTo(const QString& path);
    /// Activation statistics (an imatrix or QuantLens's safetensors form) every later run and plan
    /// weighs its error with. False + message on failure (the previous file stays).
    bool openImportance(const QString& path);
    /// Starts writing the Plan tab's checkpoint; false + message when there is no plan.
    bool exportPlanTo(const QString& path);
    /// The CI gate's rules file (quantlens-cli check --rules) on the whole-model result or the
    /// opened report: true when every tensor passes; the failures are in the message bar.
    bool checkRules(const QString& rulesPath);
    /// Starts diffing the open model (A) against the checkpoint at `path` (B) on the Diff tab; false +
    /// message when no model is open.
    bool diffAgainst(const QString& path);
    bool loadSessionFrom(const QString& path);
    Session session() const;
    void applySession(const Session& s);

    // Parts, for tests and the screenshot mode.
    TensorBrowser* browser() const { return m_browser; }
    ConfigPanel* config() const { return m_config; }
    HeadlineStrip* headline() const { return m_headline; }
    JobRunner* runner() const { return m_runner; }
    ModelTablePage* modelTable() const { return m_modelTable; }
    PlanPage* planPage() const { return m_planPage; }
    DiffPage* diffPage() const { return m_diffPage; }
    QTabWidget* tabs() const { return m_tabs; }
    const std::vector<PlotPage*>& pages() const { return m_pages; }
    /// The error the message bar shows; empty when it shows none.
    QString errorText() const;
    /// The message line's text (an error, or what the last action did).
    QString messageText() const;
    std::shared_ptr<const TensorOutcome> lastOutcome() const { return m_outcome; }
    const TensorSource* source() const { return m_source.get(); }

signals:
    /// A tensor run's result is on every page.
    void resultShown();
    /// A whole-model run filled the table.
    void modelShown();
    /// A plan's measurements are on the Plan tab.
    void planShown();
    /// A diff is on the Diff tab.
    void diffShown();
    /// A job failed or was cancelled; the text is in the message bar.
    void jobEnded(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void buildPages();
    void buildActions();     // main_window_actions.cpp
    void buildPlanPage();    // main_window_plan.cpp
    void buildDiffPage();    // main_window_diff.cpp
    void chooseDiffTarget(); // main_window_diff.cpp
    void updateRecentMenu(); // main_window_actions.cpp
    void showMessage(const QString& text, bool error);
    void onTensorSelected(const QString& name);
    void showOutcome(std::shared_ptr<const TensorOutcome> outcome);
    void showModel(std::shared_ptr<const ModelOutcome> outcome);
    void showExport(const QString& path,
                    std::shared_ptr<const ModelOutcome> outcome); // main_window_actions.cpp
    /// Refuses (message, false) when any of `outputs` (path, what) is or would replace an input of `r`.
    bool refuseOverInputs(const JobRequest& r,
                          const std::vector<std::pair<std::string, std::string>>& outputs);
    void showReportedTensor(const QString& name); // main_window_report.cpp
    static bool isReportPath(const QString& path);
    static QString modelFileFilter(); // the open dialogs' filter: every format a source reads
    JobRequest request() const;

    std::shared_ptr<const BackendRegistry> m_registry;
    std::shared_ptr<const TensorSource> m_source;
    std::shared_ptr<const TensorOutcome> m_outcome;
    std::shared_ptr<const ModelOutcome> m_model;
    std::optional<JobRequest> m_tensorRequest; // what made m_outcome and m_model: an export repeats it
    std::optional<JobRequest> m_modelRequest;
    bool m_exportingModel = false;
    std::shared_ptr<const nlohmann::json> m_report; // the opened report's "tensors", while its table shows
    QString m_reportPath;
    JobRunner* m_runner;
    TensorBrowser* m_browser = nullptr;
    ConfigPanel* m_config = nullptr;
    HeadlineStrip* m_headline = nullptr;
    QTabWidget* m_tabs = nullptr;
    std::vector<PlotPage*> m_pages;             // values, error, then the tabbed ones
    ValueHistogramPage* m_valuesPage = nullptr; // also shows the preview before a run
    ModelTablePage* m_modelTable = nullptr;
    PlanPage* m_planPage = nullptr;
    DiffPage* m_diffPage = nullptr;
    std::shared_ptr<const Importance> m_importance;
    QLabel* m_message = nullptr;
    QString m_errorText; // the message bar's text while it shows an error
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_runAllAction = nullptr;
    QAction* m_cancelAction = nullptr;
};

} // namespace ql
