// MainWindow's menus and the file-level actions behind them: open, recent files, exports, sessions.
#include "base/error.h"
#include "gui/main_window.h"
#include "io/export_compressed_tensors.h"
#include "job/export_outcome.h"
#include "quantlens/config.h"
#include "report/report.h"
#include "widgets/config_panel.h"
#include "widgets/job_runner.h"
#include "widgets/model_table_page.h"
#include "widgets/plot_page.h"
#include "widgets/qt_util.h"
#include "widgets/save_file.h"
#include "widgets/tensor_browser.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QSettings>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <filesystem>

namespace ql {
namespace {

QAction* action(QObject* parent, const QString& text, const QKeySequence& key, const QString& tip) {
    auto* a = new QAction(text, parent);
    a->setShortcut(key);
    a->setToolTip(tip + (key.isEmpty()
                             ? QString()
                             : QStringLiteral(" (%1)").arg(key.toString(QKeySequence::NativeText))));
    a->setStatusTip(tip);
    return a;
}

} // namespace

QString MainWindow::modelFileFilter() {
    return tr("Model files (*.safetensors *.index.json *.gguf *.onnx *.h5 *.hdf5 *.keras);;All files (*)");
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = action(this, tr("&Open…"), QKeySequence::Open,
                           tr("Open a safetensors file, a sharded "
                              ".safetensors.index.json, or an HDF5, GGUF or ONNX file"));
    open->setIcon(style()->standardIcon(QStyle::SP_DialogOpenButton));
    connect(open, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), {}, modelFileFilter());
        if (!path.isEmpty()) openFile(path);
    });
    file->addAction(open);
    QAction* openReportAction =
        action(this, tr("Open re&port…"), QKeySequence(tr("Ctrl+Alt+O")),
               tr("Show a JSON report written earlier — by the CLI, the app, or merged "
                  "from shards — as the whole-model table with every plot it carries"));
    connect(openReportAction, &QAction::triggered, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open report"), {}, tr("Reports (*.json);;All files (*)"));
        if (!path.isEmpty()) openReport(path);
    });
    file->addAction(openReportAction);
    QAction* openImportanceAction = action(
        this, tr("Open &importance…"), QKeySequence(tr("Ctrl+I")),
        tr("Activation statistics per input channel (a llama.cpp imatrix .dat/.gguf, or a safetensors file "
           "of "
           "<module>.input_sq_mean or <module>.inputs): runs then report and rank by the weighted SQNR"));
    connect(openImportanceAction, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open importance"), {}, tr("Importance (*.dat *.gguf *.safetensors);;All files (*)"));
        if (!path.isEmpty()) openImportance(path);
    });
    file->addAction(openImportanceAction);
    QAction* diffAction =
        action(this, tr("&Diff against…"), QKeySequence(tr("Ctrl+Shift+D")),
               tr("Compare the open model with another checkpoint of it (its GGUF, ONNX QDQ model or "
                  "compressed-tensors export) tensor by tensor on the Diff tab"));
    connect(diffAction, &QAction::triggered, this, &MainWindow::chooseDiffTarget);
    file->addAction(diffAction);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    m_recentMenu->setToolTipsVisible(true);
    updateRecentMenu();
    file->addSeparator();
    QAction* saveSession =
        action(this, tr("&Save session…"), QKeySequence::Save,
               tr("Save the file, tensor, spec, backends and window layout as a JSON session"));
    connect(saveSession, &QAction::triggered, this, [this] {
        const QString p = saveFileName(this, tr("Save session"), tr("Session (*.qlsession.json)"));
        if (!p.isEmpty()) saveSessionTo(p);
    });
    QAction* loadSession = action(this, tr("Open session…"), QKeySequence(tr("Ctrl+Shift+O")),
                                  tr("Restore a saved session: file, tensor, spec, backends and layout"));
    connect(loadSession, &QAction::triggered, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open session"), {}, tr("Session (*.json)"));
        if (!p.isEmpty()) loadSessionFrom(p);
    });
    file->addActions({saveSession, loadSession});
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    QAction* exWeights =
        action(this, tr("Quantized &weights…"), QKeySequence(tr("Ctrl+E")),
               tr("Write the last result's codes, scales and zero points (safetensors in the "
                  "compressed-tensors naming, or HDF5)"));
    connect(exWeights, &QAction::triggered, this, [this] {
        QString filter = tr("safetensors (*.safetensors)");
        if (QUANTLENS_HAVE_HDF5) filter += tr(";;HDF5 (*.h5)");
        const QString p = saveFileName(this, tr("Export quantized weights"), filter);
        if (!p.isEmpty()) exportWeights(p);
    });
    QAction* exReport = action(this, tr("&Report…"), QKeySequence(tr("Ctrl+Shift+E")),
                               tr("Write the statistics of the last result as JSON or CSV"));
    connect(exReport, &QAction::triggered, this, [this] {
        const QString p = saveFileName(this, tr("Export report"), tr("JSON (*.json);;CSV (*.csv)"));
        if (!p.isEmpty()) exportReport(p);
    });
    QAction* exPlot = action(this, tr("&Plot…"), QKeySequence(tr("Ctrl+Alt+E")),
                             tr("Save the current result tab as PNG, SVG, PDF or JPEG"));
    connect(exPlot, &QAction::triggered, this, [this] {
        const QString p =
            saveFileName(this, tr("Export plot"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;JPEG (*.jpg)"));
        if (!p.isEmpty()) exportPlot(p);
    });
    exportMenu->addActions({exWeights, exReport, exPlot});
    file->addSeparator();
    QAction* quit = action(this, tr("&Quit"), QKeySequence::Quit, tr("Close QuantLens"));
    connect(quit, &QAction::triggered, this, &QWidget::close);
    file->addAction(quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    m_runAction = action(this, tr("Quantize &selected"), QKeySequence(tr("Ctrl+R")),
                         tr("Quantize the selected tensor with the current spec on backend A (and B)"));
    m_runAction->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    connect(m_runAction, &QAction::triggered, this, &MainWindow::quantizeSelected);
    m_runAllAction =
        action(this, tr("Quantize &all"), QKeySequence(tr("Ctrl+Shift+R")),
               tr("Quantize every floating tensor with the current spec and fill the whole-model table"));
    m_runAllAction->setIcon(style()->standardIcon(QStyle::SP_MediaSeekForward));
    connect(m_runAllAction, &QAction::triggered, this, &MainWindow::quantizeAll);
    m_cancelAction = action(this, tr("&Cancel"), QKeySequence(Qt::Key_Escape), tr("Stop the running job"));
    m_cancelAction->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
    m_cancelAction->setEnabled(false);
    connect(m_cancelAction, &QAction::triggered, this, &MainWindow::cancel);
    run->addActions({m_runAction, m_runAllAction, m_cancelAction});
    run->addSeparator();
    QAction* check =
        action(this, tr("C&heck against rules…"), QKeySequence(tr("Ctrl+K")),
               tr("Evaluate a rules file (one rule per line, as quantlens-cli check --rules reads it) "
                  "on the whole-model table: which tensors fail, and why"));
    connect(check, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Check against rules"), {},
                                                          tr("Rules (*.txt *.rules);;All files (*)"));
        if (!path.isEmpty()) checkRules(path);
    });
    run->addAction(check);

    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolbar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addActions({open, m_runAction, m_runAllAction, m_cancelAction});
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

bool MainWindow::refuseOverInputs(const JobRequest& r,
                                  const std::vector<std::pair<std::string, std::string>>& outputs) {
    try {
        refuseOutputsOverInputs(r, outputs);
    } catch (const std::exception& e) {
        showMessage(qs(e.what()), true);
        return true;
    }
    return false;
}

bool MainWindow::exportWeights(const QString& path) {
    // The table's run, or the tensor's (side A); repeated for the target, so that what it cannot store
    // is decided during the run, as the CLI's quantize --out does, and the table says what it holds.
    const bool whole = m_model && m_modelRequest && m_tabs->currentWidget() == m_modelTable;
    const std::optional<JobRequest>& ran = whole ? m_modelRequest : m_tensorRequest;
    if (!ran || (!whole && !m_outcome)) {
        showMessage(tr("Nothing to export yet: run Quantize selected or Quantize all first."), true);
        return false;
    }
    const ExportTarget target{ss(path), ExportLayout::CompressedTensors, ran->source->path()};
    std::vector<std::pair<std::string, std::string>> outputs{{target.path, "the export"}};
    try {
        if (!isHdf5Export(target.path)) {
            (void)checkConfigTarget(target.path, target.model); // never the model's own config.json
            outputs.emplace_back(
                (std::filesystem::absolute(target.path).parent_path() / "config.json").string(),
                "the export's config.json");
        }
    } catch (const std::exception& e) {
        showMessage(tr("Export failed: %1").arg(qs(e.what())), true);
        return false;
    }
    if (refuseOverInputs(*ran, outputs)) return false;
    showMessage({}, false);
    m_exportingModel = whole;
    m_runner->startExport(*ran, whole ? std::string() : m_outcome->a.report.name, target);
    return true;
}

void MainWindow::showExport(const QString& path, std::shared_ptr<const ModelOutcome> outcome) {
    if (m_exportingModel) { // the table shows what the export holds: its report agrees with it
        m_model = outcome;
        m_modelTable->setRows(modelRows(m_model->reports));
    }
    const auto quantized =
        static_cast<int>(outcome->reports.size()) - outcome->failed - outcome->passedThrough;
    QString done = tr("Wrote %1 quantized tensor(s)").arg(quantized);
    if (outcome->passedThrough) done += tr(" and %1 kept unquantized").arg(outcome->passedThrough);
    if (outcome->failed) done += tr(" (%1 failed, listed in the file's metadata)").arg(outcome->failed);
    done += tr(" to %1.").arg(path);
    // As the CLI's quantize --all says: what the file holds that QuantLens does not read is not in it.
    if (m_exportingModel && m_source && !m_source->unlisted().empty())
        done += tr(" %1 tensor(s) in the file are not read, so not in it (quantlens-cli inspect lists them).")
                    .arg(m_source->unlisted().size());
    showMessage(done, false);
    emit jobEnded(QString());
}

bool MainWindow::exportReport(const QString& path) {
    std::vector<TensorReport> reports;
    const Comparison* comparison = nullptr;
    if (m_model && m_tabs->currentWidget() == m_modelTable) {
        reports = m_model->reports;
    } else if (m_outcome) {
        reports.push_back(m_outcome->a.report);
        if (m_outcome->b) reports.push_back(m_outcome->b->report);
        if (m_outcome->comparison) comparison = &*m_outcome->comparison;
    }
    if (reports.empty()) {
        showMessage(tr("Nothing to report yet: run Quantize selected or Quantize all first."), true);
        return false;
    }
    if (refuseOverInputs(request(), {{ss(path), "the report"}})) return false;
    try {
        writeReport(ss(path), m_source ? m_source->path() : std::string(), reports, comparison);
    } catch (const std::exception& e) {
        showMessage(tr("Report failed: %1").arg(qs(e.what())), true);
        return false;
    }
    showMessage(tr("Wrote the report to %1.").arg(path), false);
    return true;
}

bool MainWindow::exportPlot(const QString& path) {
    if (refuseOverInputs(request(), {{ss(path), "the plot"}})) return false;
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
    if (m_source) s.file = m_source->path();
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
    if (!s.file.empty() && (!m_source || m_source->path() != s.file)) openFile(qs(s.file));
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

} // namespace ql
