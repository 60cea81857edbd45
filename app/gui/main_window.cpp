#include "gui/main_window.h"

#include "builtin_backends.h"
#include "io/printable.h"
#include "widgets/clipping_page.h"
#include "widgets/comparison_page.h"
#include "widgets/config_panel.h"
#include "widgets/diff_page.h"
#include "widgets/headline_strip.h"
#include "widgets/histogram_pages.h"
#include "widgets/job_runner.h"
#include "widgets/model_table_page.h"
#include "widgets/plan_page.h"
#include "widgets/qt_util.h"
#include "widgets/tensor_browser.h"
#include "widgets/timing_page.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace ql {
namespace {

std::shared_ptr<const BackendRegistry> builtinRegistry() {
    auto r = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*r);
    return r;
}

QDockWidget* dock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* content,
                  Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, window);
    d->setObjectName(objectName); // saveState needs it
    d->setWidget(content);
    d->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    window->addDockWidget(area, d);
    return d;
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_registry(builtinRegistry())
    , m_runner(new JobRunner(this)) {
    setWindowTitle(tr("QuantLens"));
    setAcceptDrops(true);
    buildPages();
    buildActions();
    // 1440x900, or less on a smaller screen: the window must fit whole where it opens.
    const QRect screenRect = screen() ? screen()->availableGeometry() : QRect(0, 0, 1440, 900);
    resize(std::min(1440, screenRect.width() * 95 / 100), std::min(900, screenRect.height() * 95 / 100));
    // Once laid out at its real size (a small screen shrinks the window), give the docks their width
    // back from the pages: tensor names stay readable.
    QTimer::singleShot(0, this, [this] {
        const auto docks = findChildren<QDockWidget*>();
        resizeDocks(docks, QList<int>(docks.size(), std::min(340, width() / 4)), Qt::Horizontal);
    });

    connect(m_runner, &JobRunner::progress, m_progress, &QProgressBar::setValue);
    connect(m_runner, &JobRunner::busyChanged, this, [this](bool busy) {
        m_progress->setVisible(busy);
        m_cancelButton->setVisible(busy);
        m_cancelAction->setEnabled(busy);
    });
    connect(m_runner, &JobRunner::tensorFinished, this, &MainWindow::showOutcome);
    connect(m_runner, &JobRunner::modelFinished, this, &MainWindow::showModel);
    connect(m_runner, &JobRunner::exported, this, &MainWindow::showExport);
    connect(m_runner, &JobRunner::previewReady, this,
            [this](std::shared_ptr<const ValuePreview> p) { m_valuesPage->setPreview(*p); });
    connect(m_runner, &JobRunner::failed, this, [this](const QString& why) {
        showMessage(why, true);
        emit jobEnded(why);
    });
    connect(m_runner, &JobRunner::cancelled, this, [this] {
        showMessage(tr("Cancelled; the pages keep the last finished result."), false);
        emit jobEnded(tr("cancelled"));
    });
}

MainWindow::~MainWindow() = default;

void MainWindow::buildPages() {
    m_browser = new TensorBrowser(this);
    m_config = new ConfigPanel(m_registry, this);
    dock(this, tr("Tensors"), QStringLiteral("tensors"), m_browser, Qt::LeftDockWidgetArea);
    // The panel is taller than small screens: it scrolls rather than squeezing its notes.
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_config);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // A dock narrower than the panel's controls scrolls sideways too, rather than cutting them off.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    dock(this, tr("Configuration"), QStringLiteral("configuration"), scroll, Qt::RightDockWidgetArea);
    connect(m_browser, &TensorBrowser::tensorSelected, this, &MainWindow::onTensorSelected);
    connect(m_config, &ConfigPanel::specChanged, this, [this] {
        // A result stays on screen after a setting changes, marked as no longer what the panel says.
        if (!m_outcome) return;
        const SideOutcome& a = m_outcome->a;
        QStringList changed;
        if (a.report.plan.spec != m_config->spec()) changed << tr("the spec");
        if (a.report.backend != m_config->backend()) changed << tr("the backend");
        if (m_outcome->b.has_value() != (m_config->compare().kind != CompareWith::Kind::None))
            changed << tr("the comparison");
        m_headline->setStale(
            changed.isEmpty() ? QString() : tr("%1 changed since this run.").arg(changed.join(tr(" and "))));
    });

    m_message = new QLabel(this);
    m_message->setTextFormat(Qt::PlainText); // messages quote names from files: never read as HTML
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setVisible(false);
    m_headline = new HeadlineStrip(this);

    auto* values = m_valuesPage = new ValueHistogramPage(this);
    auto* error = new ErrorHistogramPage(this);
    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(values);
    top->addWidget(error);
    m_tabs = new QTabWidget(this);
    m_tabs->setToolTip(
        tr("Result pages: clipping and SQNR per group, timings, A-vs-B comparison, whole model"));
    auto* clipping = new ClippingPage(this);
    auto* timing = new TimingPage(this);
    auto* comparison = new ComparisonPage(this);
    m_modelTable = new ModelTablePage(this);
    m_tabs->addTab(clipping, tr("Clipping && SQNR per group"));
    m_tabs->addTab(timing, tr("Timing"));
    m_tabs->addTab(comparison, tr("A vs B"));
    m_tabs->addTab(m_modelTable, tr("Whole model"));
    m_pages = {values, error, clipping, timing, comparison};
    buildPlanPage();
    buildDiffPage();
    connect(m_modelTable, &ModelTablePage::tensorActivated, this, [this](const QString& name) {
        if (m_report) return showReportedTensor(name);
        if (selectTensor(name)) quantizeSelected();
    });

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(m_tabs);
    // The value and error histograms first: each has one plot and a note, the tab pages two plots.
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_message);
    layout->addWidget(m_headline);
    layout->addWidget(split, 1);
    setCentralWidget(central);

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
}

void MainWindow::showMessage(const QString& text, bool error) {
    m_errorText = error ? text : QString();
    m_message->setText(text);
    m_message->setStyleSheet(error ? QStringLiteral("background: #fde7e9; color: #8a0010; padding: 4px;")
                                   : QStringLiteral("background: #eef3fb; padding: 4px;"));
    m_message->setToolTip(error ? tr("What went wrong (select the text to copy it)") : QString());
    m_message->setVisible(!text.isEmpty());
    statusBar()->showMessage(text.section(QLatin1Char('\n'), 0, 0), 10000);
}

QString MainWindow::errorText() const {
    return m_errorText;
}

QString MainWindow::messageText() const {
    return m_message->text();
}

bool MainWindow::openFile(const QString& path) {
    if (isReportPath(path)) return openReport(path);
    std::shared_ptr<const TensorSource> source;
    try {
        source = openTensorSource(ss(path));
    } catch (const std::exception& e) {
        showMessage(tr("Could not open %1:\n%2").arg(path, qs(e.what())), true);
        return false;
    }
    m_runner->cancel();
    m_source = std::move(source);
    m_outcome.reset();
    m_model.reset();
    m_tensorRequest.reset();
    m_modelRequest.reset();
    m_report.reset();
    m_browser->setSource(m_source.get());
    m_modelTable->clear(tr("Run ▸ Quantize all (Ctrl+Shift+R) fills this table with every tensor of %1.")
                            .arg(QFileInfo(path).fileName()));
    m_planPage->clear(
        tr("Measure formats to plan a mixed-precision checkpoint of %1.").arg(QFileInfo(path).fileName()));
    m_diffPage->clear(tr("Diff %1 against another checkpoint of it: File ▸ Diff against… (Ctrl+Shift+D).")
                          .arg(QFileInfo(path).fileName()));
    m_headline->clear();
    for (PlotPage* p : m_pages)
        p->clear(tr("Select a tensor and run (Ctrl+R)."));
    setWindowTitle(tr("%1 — QuantLens").arg(QFileInfo(path).fileName()));
    // (path and count at once: a path holding "%2" must not take the count)
    const std::size_t listed = m_source->tensors().size();
    QString opened = listed == 1 ? tr("%1: 1 tensor.").arg(path)
                                 : tr("%1: %2 tensors.").arg(path, QString::number(listed));
    // What the file holds beyond the list (a GGUF tensor of an undecoded type, an HDF5 dataset of an
    // unreadable one), and why.
    const std::vector<UnlistedEntry>& left = m_source->unlisted();
    constexpr std::size_t kNamed = 3;
    for (std::size_t i = 0; i < std::min(left.size(), kNamed); ++i)
        opened += (i == 0 ? tr("\nNot listed: ") : QStringLiteral("; ")) + qs(printable(left[i].name)) +
                  QStringLiteral(" (") + qs(left[i].reason) + QStringLiteral(")");
    if (left.size() > kNamed)
        opened += tr("; and %1 more (quantlens-cli inspect lists them)").arg(left.size() - kNamed);
    showMessage(opened, false);

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
    const TensorInfo* info = m_source ? m_source->find(ss(name)) : nullptr;
    if (!info) return;
    m_config->setShape(info->shape);
    if (!m_outcome || m_outcome->a.report.name != info->name) {
        m_headline->clear();
        for (PlotPage* p : m_pages)
            if (p != m_valuesPage)
                p->clear(tr("Run (Ctrl+R) to quantize %1.").arg(name)); // the values preview stays
    }
    if (isFloating(info->dtype))
        m_runner->startPreview(m_source, info->name);
    else
        m_valuesPage->clear(
            tr("%1 is %2, not a floating tensor: nothing to quantize.").arg(name, qs(nameOf(info->dtype))));
}

JobRequest MainWindow::request() const {
    JobRequest r;
    r.source = m_source;
    r.registry = m_registry;
    r.spec = m_config->spec();
    r.backend = m_config->backend();
    r.compare = m_config->compare();
    r.params = m_config->paramFiles();
    r.importance = m_importance;
    return r;
}

void MainWindow::quantizeSelected() {
    if (!m_source) return showMessage(tr("Open a model file first (Ctrl+O)."), true);
    const std::string tensor = m_browser->selectedTensor();
    if (tensor.empty()) return showMessage(tr("Select a tensor in the browser first."), true);
    if (!m_config->plan() || !m_config->problem().isEmpty()) // side B's problems too, before any work
        return showMessage(tr("Cannot quantize %1: %2").arg(qs(tensor), m_config->problem()), true);
    showMessage({}, false);
    m_tensorRequest = request();
    m_runner->startTensor(*m_tensorRequest, tensor);
}

void MainWindow::quantizeAll() {
    if (!m_source) return showMessage(tr("Open a model file first (Ctrl+O)."), true);
    showMessage({}, false);
    m_modelRequest = request();
    m_runner->startModel(*m_modelRequest);
}

void MainWindow::cancel() {
    m_runner->cancel();
}

void MainWindow::showOutcome(std::shared_ptr<const TensorOutcome> outcome) {
    m_outcome = std::move(outcome);
    m_headline->setOutcome(*m_outcome);
    for (PlotPage* p : m_pages)
        p->setOutcome(*m_outcome);
    statusBar()->showMessage(
        tr("%1 quantized: %2").arg(qs(m_outcome->a.report.name), qs(describe(m_outcome->a.report.plan.spec))),
        10000);
    if (const std::string& note = m_outcome->a.report.params.calibrationNote; !note.empty())
        showMessage(tr("Calibration: %1").arg(qs(note)), false); // far worse than absmax: said where it shows
    emit resultShown();
}

void MainWindow::showModel(std::shared_ptr<const ModelOutcome> outcome) {
    m_model = std::move(outcome);
    m_report.reset();
    m_modelTable->setRows(modelRows(m_model->reports));
    m_tabs->setCurrentWidget(m_modelTable);
    emit modelShown();
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
    m_runner->cancel();
    QSettings().setValue(QStringLiteral("lastSession"), session().toJson());
    event->accept();
}

} // namespace ql
