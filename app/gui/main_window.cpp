#include "gui/main_window.h"

#include "gui/dock_widths.h"
#include "gui/window_helpers.h"
#include "io/model_formats.h"
#include "io/printable.h"
#include "quantlens/config.h"
#include "report/report.h"
#include "widgets/banner.h"
#include "widgets/config_panel.h"
#include "widgets/diff_page.h"
#include "widgets/file_filters.h"
#include "widgets/headline_strip.h"
#include "widgets/job_runner.h"
#include "widgets/model_error_page.h"
#include "widgets/model_info_view.h"
#include "widgets/model_table_page.h"
#include "widgets/plan_page.h"
#include "widgets/plot_page.h"
#include "widgets/qt_util.h"
#include "widgets/save_file.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_view.h"
#include "widgets/weights_export.h"
#include "widgets/workbench.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

namespace ql {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent) {
    setWindowTitle(tr("QuantLens"));
    setAcceptDrops(true);
    auto registry = builtinRegistry();
    m_config = new ConfigPanel(registry, this);
    m_bench = new Workbench(registry, m_config, this);
    connect(m_bench, &Workbench::message, this, &MainWindow::showMessage);
    connect(m_bench, &Workbench::status, this,
            [this](const QString& text) { statusBar()->showMessage(text, 10000); });
    connect(m_bench, &Workbench::jobEnded, this, &MainWindow::jobEnded);
    connect(m_bench, &Workbench::raiseRequested, this,
            [this](QWidget* page) { m_tabs->setCurrentWidget(page); });
    buildPages();
    buildStatusBar();
    buildActions();
    new DockWidths(this); // docks squeezed by a narrow window take their width back as it grows
    // 1440x900, or less on a smaller screen: the window must fit whole where it opens.
    const QRect screenRect = screen() ? screen()->availableGeometry() : QRect(0, 0, 1440, 900);
    resize(std::min(1440, screenRect.width() * 95 / 100), std::min(900, screenRect.height() * 95 / 100));
    // Once laid out at its real size (a small screen shrinks the window), give the docks their width
    // back from the pages: tensor names stay readable.
    QTimer::singleShot(0, this, [this] {
        const auto docks = findChildren<QDockWidget*>();
        resizeDocks(docks, QList<int>(docks.size(), std::min(340, width() / 4)), Qt::Horizontal);
        // The histograms 3 parts, the tab pages 2: a splitter lays out by size hints, which gave the
        // two-plot tab pages most of a 1280x800 window and left the histograms at their minimum.
        if (auto* split = centralWidget()->findChild<QSplitter*>(QString(), Qt::FindDirectChildrenOnly)) {
            const int height = split->height();
            split->setSizes({height * 3 / 5, height - height * 3 / 5});
        }
    });
}

MainWindow::~MainWindow() = default;

template <typename Page> Page* MainWindow::addPage(Page* page, const QString& title) {
    m_tabs->addTab(page, title);
    return page;
}

void MainWindow::buildPages() {
    m_browser = new TensorBrowser(this);
    tabifyDockWidget(
        addDock(this, tr("Model info"), QStringLiteral("modelInfo"), new ModelInfoView(m_bench, this),
                Qt::LeftDockWidgetArea),
        addDock(this, tr("Tensors"), QStringLiteral("tensors"), m_browser, Qt::LeftDockWidgetArea));
    // The panel is taller than small screens: it scrolls rather than squeezing its notes.
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_config);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // A dock narrower than the panel's controls scrolls sideways too, rather than cutting them off.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    addDock(this, tr("Configuration"), QStringLiteral("configuration"), scroll, Qt::RightDockWidgetArea);
    connect(m_browser, &TensorBrowser::tensorSelected, this, &MainWindow::onTensorSelected);

    m_message = new Banner(QString(), this); // plain text, at most two lines, closable
    m_message->setVisible(false);

    m_tensorView = new TensorView(m_bench, this);
    const std::vector<PlotPage*>& tensorPages = m_tensorView->pages();
    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(tensorPages[0]); // values
    top->addWidget(tensorPages[1]); // error
    m_tabs = new QTabWidget(this);
    m_tabs->setToolTip(
        tr("Result pages: clipping and SQNR per group, timings, A-vs-B comparison, whole model"));
    const QStringList titles = m_tensorView->tabTitles();
    for (std::size_t i = 2; i < tensorPages.size(); ++i)
        addPage(tensorPages[i], titles[static_cast<qsizetype>(i - 2)]);
    m_modelTable = addPage(new ModelTablePage(m_bench, this), tr("Whole model"));
    m_planPage = addPage(new PlanPage(m_bench, this), tr("Plan"));
    m_diffPage = addPage(new DiffPage(m_bench, this), tr("Diff"));
    connect(addPage(new ModelErrorPage(m_bench, this), tr("Model")), &ModelErrorPage::weightActivated, this,
            &MainWindow::selectTensor);
    // The table opens its tensors on the tensor's pages.
    connect(m_modelTable, &ModelTablePage::runRequested, this, [this](const QString& name) {
        if (selectTensor(name)) quantizeSelected();
    });
    connect(m_modelTable, &ModelTablePage::reportedTensorActivated, m_tensorView, &TensorView::show);
    connect(m_modelTable, &ModelTablePage::reportOpened, m_tensorView,
            [this] { m_tensorView->clear(tr("Double-click a tensor in the table to see its report.")); });

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(m_tabs);
    // The value and error histograms first: each has one plot and a note, the tab pages two plots.
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    // A tab widget asks for the tallest of its pages' minimums, a hidden page's worked out at a stale
    // width; two plots and a note are what a page needs in front.
    m_tabs->setMinimumHeight(320);
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_message);
    layout->addWidget(m_tensorView->headline());
    layout->addWidget(split, 1);
    setCentralWidget(central);
}

void MainWindow::buildStatusBar() {
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(240);
    m_progress->setToolTip(tr("Progress of the running job"));
    m_progress->setVisible(false);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setToolTip(tr("Stop the running job (Esc); the pages keep the last finished result"));
    m_cancelButton->setVisible(false);
    connect(m_cancelButton, &QPushButton::clicked, this, &MainWindow::cancel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancelButton);
    JobRunner* runner = m_bench->runner();
    connect(runner, &JobRunner::started, this, [this](JobHandle* job) {
        m_progress->setValue(0);
        connect(job, &JobHandle::progress, m_progress,
                [this](double done) { m_progress->setValue(static_cast<int>(done * 100)); });
    });
    connect(runner, &JobRunner::busyChanged, this, [this](bool busy) {
        m_progress->setVisible(busy);
        m_cancelButton->setVisible(busy);
        if (m_cancelAction) m_cancelAction->setEnabled(busy);
    });
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = makeAction(this, tr("&Open…"), QKeySequence::Open,
                               tr("Open a model file (%1), or a sharded checkpoint by its "
                                  ".safetensors.index.json")
                                   .arg(qs(modelFormatNames())));
    open->setIcon(style()->standardIcon(QStyle::SP_DialogOpenButton));
    connect(open, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), {}, modelFileFilter());
        if (!path.isEmpty()) openFile(path);
    });
    file->addAction(open);
    QAction* openReportAction =
        makeAction(this, tr("Open re&port…"), QKeySequence(tr("Ctrl+Alt+O")),
                   tr("Show a JSON report written earlier — by the CLI, the app, or merged "
                      "from shards — as the whole-model table with every plot it carries"));
    connect(openReportAction, &QAction::triggered, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open report"), {}, tr("Reports (*.json);;All files (*)"));
        if (!path.isEmpty()) m_modelTable->openReport(path);
    });
    file->addAction(openReportAction);
    QAction* openImportanceAction = makeAction(
        this, tr("Open &importance…"), QKeySequence(tr("Ctrl+I")),
        tr("Activation statistics per input channel (a llama.cpp imatrix .dat/.gguf, or a safetensors file "
           "of "
           "<module>.input_sq_mean or <module>.inputs): runs then report and rank by the weighted SQNR"));
    connect(openImportanceAction, &QAction::triggered, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open importance"), {}, importanceFileFilter());
        if (!path.isEmpty()) m_bench->openImportance(path);
    });
    file->addAction(openImportanceAction);
    QAction* diffAction =
        makeAction(this, tr("&Diff against…"), QKeySequence(tr("Ctrl+Shift+D")),
                   tr("Compare the open model with another checkpoint of it (its GGUF, ONNX QDQ model or "
                      "compressed-tensors export) tensor by tensor on the Diff tab"));
    connect(diffAction, &QAction::triggered, m_diffPage, &DiffPage::chooseTarget);
    file->addAction(diffAction);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    m_recentMenu->setToolTipsVisible(true);
    updateRecentMenu();
    file->addSeparator();
    QAction* saveSession =
        makeAction(this, tr("&Save session…"), QKeySequence::Save,
                   tr("Save the file, tensor, spec, backends and window layout as a JSON session"));
    connect(saveSession, &QAction::triggered, this, [this] {
        const QString p = saveFileName(this, tr("Save session"), tr("Session (*.qlsession.json)"));
        if (!p.isEmpty()) saveSessionTo(p);
    });
    QAction* loadSession = makeAction(this, tr("Open session…"), QKeySequence(tr("Ctrl+Shift+O")),
                                      tr("Restore a saved session: file, tensor, spec, backends and layout"));
    connect(loadSession, &QAction::triggered, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open session"), {}, tr("Session (*.json)"));
        if (!p.isEmpty()) loadSessionFrom(p);
    });
    file->addActions({saveSession, loadSession});
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    QAction* exWeights =
        makeAction(this, tr("Quantized &weights…"), QKeySequence(tr("Ctrl+E")),
                   tr("Write the last result's codes, scales and zero points (safetensors in the "
                      "compressed-tensors naming, or HDF5)"));
    connect(exWeights, &QAction::triggered, this, [this] {
        const WeightsExportChoice c = askWeightsExport(this); // each layout core's table offers
        if (!c.path.isEmpty()) exportWeights(c.path, c.layout);
    });
    QAction* exReport = makeAction(this, tr("&Report…"), QKeySequence(tr("Ctrl+Shift+E")),
                                   tr("Write the statistics of the last result as JSON or CSV"));
    connect(exReport, &QAction::triggered, this, [this] {
        const QString p = saveFileName(this, tr("Export report"), tr("JSON (*.json);;CSV (*.csv)"));
        if (!p.isEmpty()) exportReport(p);
    });
    QAction* exPlot = makeAction(this, tr("&Plot…"), QKeySequence(tr("Ctrl+Alt+E")),
                                 tr("Save the current result tab as PNG, SVG, PDF or JPEG"));
    connect(exPlot, &QAction::triggered, this, [this] {
        const QString p =
            saveFileName(this, tr("Export plot"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;JPEG (*.jpg)"));
        if (!p.isEmpty()) exportPlot(p);
    });
    exportMenu->addActions({exWeights, exReport, exPlot});
    file->addSeparator();
    QAction* quit = makeAction(this, tr("&Quit"), QKeySequence::Quit, tr("Close QuantLens"));
    connect(quit, &QAction::triggered, this, &QWidget::close);
    file->addAction(quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* runAction =
        makeAction(this, tr("Quantize &selected"), QKeySequence(tr("Ctrl+R")),
                   tr("Quantize the selected tensor with the current spec on backend A (and B)"));
    runAction->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    connect(runAction, &QAction::triggered, this, &MainWindow::quantizeSelected);
    QAction* runAllAction =
        makeAction(this, tr("Quantize &all"), QKeySequence(tr("Ctrl+Shift+R")),
                   tr("Quantize every floating tensor with the current spec and fill the whole-model table"));
    runAllAction->setIcon(style()->standardIcon(QStyle::SP_MediaSeekForward));
    connect(runAllAction, &QAction::triggered, this, &MainWindow::quantizeAll);
    m_cancelAction =
        makeAction(this, tr("&Cancel"), QKeySequence(Qt::Key_Escape), tr("Stop the running job"));
    m_cancelAction->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
    m_cancelAction->setEnabled(false);
    connect(m_cancelAction, &QAction::triggered, this, &MainWindow::cancel);
    run->addActions({runAction, runAllAction, m_cancelAction});
    run->addSeparator();
    QAction* check =
        makeAction(this, tr("C&heck against rules…"), QKeySequence(tr("Ctrl+K")),
                   tr("Evaluate a rules file (one rule per line, as quantlens-cli check --rules reads it) "
                      "on the whole-model table: which tensors fail, and why"));
    connect(check, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Check against rules"), {},
                                                          tr("Rules (*.txt *.rules);;All files (*)"));
        if (!path.isEmpty()) m_modelTable->checkRules(path);
    });
    run->addAction(check);

    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolbar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addActions({open, runAction, runAllAction, m_cancelAction});
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& path : recent) {
        QAction* a = m_recentMenu->addAction(QFileInfo(path).fileName());
        a->setToolTip(plainToolTip(path));
        connect(a, &QAction::triggered, this, [this, path] { openFile(path); });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

HeadlineStrip* MainWindow::headline() const {
    return m_tensorView->headline();
}

JobRunner* MainWindow::runner() const {
    return m_bench->runner();
}

const std::vector<PlotPage*>& MainWindow::pages() const {
    return m_tensorView->pages();
}

const TensorSource* MainWindow::source() const {
    return m_bench->source().get();
}

void MainWindow::showMessage(const QString& text, bool error) {
    m_errorText = error ? text : QString();
    m_message->setStyleSheet(error ? QStringLiteral("background: #fde7e9; color: #8a0010; padding: 4px;")
                                   : QStringLiteral("background: #eef3fb; padding: 4px;"));
    m_message->setHint(error ? tr("What went wrong (select the text to copy it)") : QString());
    m_message->setMessage(text);
    statusBar()->showMessage(text.section(QLatin1Char('\n'), 0, 0), 10000);
}

QString MainWindow::errorText() const {
    return m_errorText;
}

QString MainWindow::messageText() const {
    return m_message->message();
}

bool MainWindow::openFile(const QString& path) {
    if (ModelTablePage::isReportPath(path)) return m_modelTable->openReport(path);
    std::shared_ptr<const TensorSource> source;
    try {
        source = openTensorSource(ss(path));
    } catch (const std::exception& e) {
        showMessage(tr("Could not open %1:\n%2").arg(path, qs(e.what())), true);
        return false;
    }
    m_bench->setSource(std::move(source)); // the pages forget the previous model's results
    const TensorSource& opened = *m_bench->source();
    m_browser->setSource(&opened);
    setWindowTitle(tr("%1 — QuantLens").arg(QFileInfo(path).fileName()));
    // (path and count at once: a path holding "%2" must not take the count)
    const std::size_t listed = opened.tensors().size();
    QString text = listed == 1 ? tr("%1: 1 tensor.").arg(path)
                               : tr("%1: %2 tensors.").arg(path, QString::number(listed));
    // What the file holds beyond the list (a GGUF tensor of an undecoded type, an HDF5 dataset of an
    // unreadable one), and why.
    const std::vector<UnlistedEntry>& left = opened.unlisted();
    constexpr std::size_t kNamed = 3;
    for (std::size_t i = 0; i < std::min(left.size(), kNamed); ++i)
        text += (i == 0 ? tr("\nNot listed: ") : QStringLiteral("; ")) + qs(printable(left[i].name)) +
                QStringLiteral(" (") + qs(left[i].reason) + QStringLiteral(")");
    if (left.size() > kNamed)
        text += tr("; and %1 more (quantlens-cli inspect lists them)").arg(left.size() - kNamed);
    showMessage(text, false);

    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    recent.removeAll(QFileInfo(path).absoluteFilePath());
    recent.prepend(QFileInfo(path).absoluteFilePath());
    settings.setValue(QStringLiteral("recentFiles"), recent.mid(0, 10));
    updateRecentMenu();
    return true;
}

bool MainWindow::selectTensor(const QString& name) {
    return m_browser->selectTensor(ss(name));
}

void MainWindow::onTensorSelected(const QString& name) {
    const TensorInfo* info = source() ? source()->find(ss(name)) : nullptr;
    if (!info) return;
    m_tensorView->select(*info); // the panel plans for it there
}

void MainWindow::quantizeSelected() {
    m_tensorView->quantize(m_browser->selectedTensor());
}

void MainWindow::quantizeAll() {
    m_modelTable->quantizeAll();
}

void MainWindow::cancel() {
    m_bench->runner()->cancel();
}

bool MainWindow::exportWeights(const QString& path, ExportLayout layout) {
    // The table's run, or the tensor's (side A); repeated for the target, so that what it cannot store
    // is decided during the run, as the CLI's quantize --out does, and the table says what it holds.
    if (m_modelTable->outcome() && m_tabs->currentWidget() == m_modelTable)
        return m_modelTable->exportWeights(path, layout);
    return m_tensorView->exportWeights(path, layout);
}

bool MainWindow::exportReport(const QString& path) {
    std::vector<TensorReport> reports;
    const Comparison* comparison = nullptr;
    const std::shared_ptr<const TensorOutcome> tensor = m_tensorView->outcome();
    if (m_modelTable->outcome() && m_tabs->currentWidget() == m_modelTable) {
        reports = m_modelTable->outcome()->reports;
    } else if (tensor) {
        reports.push_back(tensor->a.report);
        if (tensor->b) reports.push_back(tensor->b->report);
        if (tensor->comparison) comparison = &*tensor->comparison;
    }
    if (reports.empty()) {
        showMessage(tr("Nothing to report yet: run Quantize selected or Quantize all first."), true);
        return false;
    }
    if (m_bench->refuseOverInputs(m_bench->request(), {{ss(path), "the report"}})) return false;
    try {
        writeReport(ss(path), source() ? source()->path() : std::string(), reports, comparison);
    } catch (const std::exception& e) {
        showMessage(tr("Report failed: %1").arg(qs(e.what())), true);
        return false;
    }
    showMessage(tr("Wrote the report to %1.").arg(path), false);
    return true;
}

bool MainWindow::exportPlot(const QString& path) {
    if (m_bench->refuseOverInputs(m_bench->request(), {{ss(path), "the plot"}})) return false;
    bool ok = false;
    if (auto* page = qobject_cast<PlotPage*>(m_tabs->currentWidget()))
        ok = page->exportTo(path);
    else
        ok = m_modelTable->exportTo(path);
    if (!ok) showMessage(tr("Could not write %1 (PNG, SVG, PDF and JPEG are supported).").arg(path), true);
    return ok;
}

Session MainWindow::session() const {
    Session s;
    if (source()) s.file = source()->path();
    s.tensor = m_browser->selectedTensor();
    s.spec = m_config->spec();
    s.backend = m_config->backend();
    s.compare = m_config->compare();
    s.params = m_config->paramFiles();
    s.geometry = saveGeometry();
    s.state = saveState();
    s.page = m_tabs->currentIndex();
    return s;
}

void MainWindow::applySession(const Session& s) {
    if (!s.file.empty() && (!source() || source()->path() != s.file)) openFile(qs(s.file));
    if (!s.geometry.isEmpty()) restoreGeometry(s.geometry);
    if (!s.state.isEmpty()) restoreState(s.state);
    m_tabs->setCurrentIndex(s.page);
    if (!s.tensor.empty()) m_browser->selectTensor(s.tensor);
    m_config->setSpec(s.spec);
    m_config->setBackend(s.backend);
    m_config->setCompare(s.compare);
    m_config->setParamFiles(s.params);
}

bool MainWindow::saveSessionTo(const QString& path) {
    try {
        saveSession(path, session());
    } catch (const std::exception& e) {
        showMessage(tr("Could not save the session: %1").arg(qs(e.what())), true);
        return false;
    }
    showMessage(tr("Session saved to %1.").arg(path), false);
    return true;
}

bool MainWindow::loadSessionFrom(const QString& path) {
    try {
        applySession(loadSession(path));
    } catch (const std::exception& e) {
        showMessage(tr("Could not open the session: %1").arg(qs(e.what())), true);
        return false;
    }
    return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) openFile(urls.first().toLocalFile());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_bench->runner()->cancel();
    QSettings().setValue(QStringLiteral("lastSession"), session().toJson());
    event->accept();
}

} // namespace ql
