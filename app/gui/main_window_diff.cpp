// The window's part in diffs: the Diff tab, the open model (A) against a checkpoint chosen as B.
#include "gui/main_window.h"
#include "widgets/diff_page.h"
#include "widgets/job_runner.h"
#include "widgets/qt_util.h"

#include <QFileDialog>
#include <QTabWidget>

namespace ql {

void MainWindow::buildDiffPage() {
    m_diffPage = new DiffPage(this);
    m_tabs->addTab(m_diffPage, tr("Diff"));
    connect(m_diffPage, &DiffPage::message, this, &MainWindow::showMessage);
    connect(m_diffPage, &DiffPage::diffRequested, this, &MainWindow::chooseDiffTarget);
    connect(m_runner, &JobRunner::diffFinished, this, [this](std::shared_ptr<const DiffOutcome> o) {
        const auto failed = std::count_if(o->diffs.begin(), o->diffs.end(),
                                          [](const TensorDiff& d) { return !d.failure.empty(); });
        m_diffPage->setOutcome(std::move(o));
        m_tabs->setCurrentWidget(m_diffPage);
        showMessage(failed ? tr("%n pair(s) could not be compared: the reasons are in the Diff tab.", nullptr,
                                static_cast<int>(failed))
                           : QString(),
                    failed > 0);
        emit diffShown();
        emit jobEnded(QString());
    });
}

void MainWindow::chooseDiffTarget() {
    if (!m_source) return showMessage(tr("Open a model file first (Ctrl+O): it is A, the reference."), true);
    const QString path = QFileDialog::getOpenFileName(this, tr("Diff against (B)"), {}, modelFileFilter());
    if (!path.isEmpty()) diffAgainst(path);
}

bool MainWindow::diffAgainst(const QString& path) {
    if (!m_source) {
        showMessage(tr("Open a model file first (Ctrl+O): it is A, the reference."), true);
        return false;
    }
    showMessage(tr("Comparing %1 with %2…").arg(qs(m_source->path()), path), false);
    std::optional<JobRequest> requantize;
    try {
        if (m_diffPage->requantize()) requantize = request();
    } catch (const std::exception& e) {
        showMessage(tr("Cannot re-quantize A with these settings:\n%1").arg(qs(e.what())), true);
        return false;
    }
    m_runner->startDiff(m_source, ss(path), requantize);
    return true;
}

} // namespace ql
