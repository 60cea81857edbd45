#pragma once
// The main window: a composition of pages (browser, configuration, the tensor's result pages, the
// whole-model table, plan, diff) around one Workbench (the open model, the request, the runner).
// Each page starts its own jobs and shows its own results; the window registers pages, holds the
// menus, the message bar and the progress of the running job.
#include "gui/session.h"
#include "io/export.h"

#include <QMainWindow>

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace ql {

class Banner;
class ConfigPanel;
class DiffPage;
class HeadlineStrip;
class JobRunner;
class ModelTablePage;
class PlanPage;
class PlotPage;
class TensorBrowser;
class TensorSource;
class TensorView;
class Workbench;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens a model file, or a JSON report (ModelTablePage::openReport); on failure shows the reason
    /// and keeps the previous file. Returns success.
    bool openFile(const QString& path);
    bool selectTensor(const QString& name);
    /// Quantizes the selected tensor (or explains inline why it cannot).
    void quantizeSelected();
    void quantizeAll();
    void cancel();

    // Exports without dialogs (the menu actions ask for the path, then call these). False + message on
    // failure. Every file written is refused over any input of the run (model, importance, scale file).
    /// Starts the export of the last result through the runner: the whole-model table's run when that
    /// tab is in front, else the tensor's (widgets/weights_export.h). Ends with jobEnded (empty on
    /// success); false + message when refused before any work.
    bool exportWeights(const QString& path, ExportLayout layout = ExportLayout::CompressedTensors);
    bool exportReport(const QString& path);
    bool exportPlot(const QString& path);
    bool saveSessionTo(const QString& path);
    bool loadSessionFrom(const QString& path);
    Session session() const;
    void applySession(const Session& s);

    // Parts, for tests and the screenshot mode.
    Workbench* workbench() const { return m_bench; }
    TensorBrowser* browser() const { return m_browser; }
    ConfigPanel* config() const { return m_config; }
    TensorView* tensorView() const { return m_tensorView; }
    HeadlineStrip* headline() const;
    JobRunner* runner() const;
    ModelTablePage* modelTable() const { return m_modelTable; }
    PlanPage* planPage() const { return m_planPage; }
    DiffPage* diffPage() const { return m_diffPage; }
    QTabWidget* tabs() const { return m_tabs; }
    /// The tensor's result pages: values, error, then the tabbed ones.
    const std::vector<PlotPage*>& pages() const;
    /// The error the message bar shows; empty when it shows none.
    QString errorText() const;
    /// The message line's text (an error, or what the last action did).
    QString messageText() const;
    const TensorSource* source() const;

signals:
    /// A job failed or was cancelled (the text is in the message bar), or an export or a diff ended
    /// (empty).
    void jobEnded(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void buildPages();
    void buildStatusBar();
    void buildActions();
    /// Adds a page (it wires itself to the workbench) as a tab.
    template <typename Page> Page* addPage(Page* page, const QString& title);
    void updateRecentMenu();
    void showMessage(const QString& text, bool error);
    void onTensorSelected(const QString& name);

    Workbench* m_bench = nullptr;
    TensorBrowser* m_browser = nullptr;
    ConfigPanel* m_config = nullptr;
    TensorView* m_tensorView = nullptr;
    QTabWidget* m_tabs = nullptr;
    ModelTablePage* m_modelTable = nullptr;
    PlanPage* m_planPage = nullptr;
    DiffPage* m_diffPage = nullptr;
    Banner* m_message = nullptr;
    QString m_errorText; // the message bar's text while it shows an error
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_cancelAction = nullptr;
};

} // namespace ql
