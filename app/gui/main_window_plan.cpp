// The window's part in decisions: the Plan tab's jobs, the importance file every run then weighs
// its error with, and the CI gate's rules checked on the whole-model result.
#include "gui/main_window.h"
#include "job/importance.h"
#include "report/check.h"
#include "report/report.h"
#include "widgets/job_runner.h"
#include "widgets/plan_page.h"
#include "widgets/qt_util.h"

#include <QFileInfo>
#include <QTabWidget>
#include <filesystem>

namespace ql {

void MainWindow::buildPlanPage() {
    m_planPage = new PlanPage(this);
    m_tabs->addTab(m_planPage, tr("Plan"));
    connect(m_planPage, &PlanPage::message, this, &MainWindow::showMessage);
    connect(m_planPage, &PlanPage::measureRequested, this, [this] {
        if (!m_source) return showMessage(tr("Open a model file first (Ctrl+O)."), true);
        std::vector<PlanCandidate> candidates;
        try {
            candidates = m_planPage->candidates();
        } catch (const std::exception& e) {
            return showMessage(qs(e.what()), true);
        }
        if (candidates.empty()) return showMessage(tr("Check at least one format to plan with."), true);
        showMessage({}, false);
        m_runner->startPlan(request(), candidates);
    });
    connect(m_runner, &JobRunner::planMeasured, this, [this](std::shared_ptr<const PlanMeasurements> m) {
        m_planPage->setMeasurements(std::move(m));
        m_tabs->setCurrentWidget(m_planPage);
        emit planShown();
    });
    connect(m_planPage, &PlanPage::exportRequested, this,
            [this](const QString& path) { exportPlanTo(path); });
    connect(m_runner, &JobRunner::planExported, this, [this](const QString& path, int n) {
        showMessage(tr("Wrote %1: %n weight(s) quantized as planned, with config.json beside it.", nullptr, n)
                        .arg(path),
                    false);
        emit jobEnded(QString());
    });
}

bool MainWindow::exportPlanTo(const QString& path) {
    if (!m_source || !m_planPage->result()) {
        showMessage(tr("Measure formats and choose a budget that fits first."), true);
        return false;
    }
    const JobRequest r = request();
    const std::string config = (std::filesystem::absolute(ss(path)).parent_path() / "config.json").string();
    if (refuseOverInputs(r, {{ss(path), "the plan's export"}, {config, "the plan export's config.json"}}))
        return false;
    showMessage({}, false);
    m_runner->startPlanExport(r, m_planPage->measurements(), *m_planPage->result(), ss(path));
    return true;
}

bool MainWindow::openImportance(const QString& path) {
    try {
        m_importance = Importance::open(ss(path));
    } catch (const std::exception& e) {
        showMessage(tr("Could not read the importance file %1:\n%2").arg(path, qs(e.what())), true);
        return false;
    }
    const ImportanceFile& f = m_importance->file();
    showMessage(
        tr("Importance: %1 (%2, %3 entries). Runs now report the weighted SQNR of each layer's output and "
           "rank by it; plans weigh their error with it.")
            .arg(QFileInfo(path).fileName(), qs(f.format))
            .arg(f.entries.size()),
        false);
    return true;
}

bool MainWindow::checkRules(const QString& rulesPath) {
    nlohmann::json report;
    if (m_model)
        report = reportJson(m_source ? m_source->path() : std::string(), m_model->reports);
    else if (m_report)
        report = {{"file", ss(m_reportPath)}, {"tensors", *m_report}};
    else {
        showMessage(tr("Quantize all (or open a report) first: the rules check the whole-model table."),
                    true);
        return false;
    }
    try {
        const std::vector<CheckRule> rules = readRules(ss(rulesPath));
        const CheckResult result = runChecks(report, rules);
        QStringList failing;
        int checked = 0;
        for (const auto& subject : result.subjects) {
            checked += subject.status != "kept";
            if (subject.status == "fail")
                failing << tr("%1: %2").arg(
                    qs(subject.name),
                    qs(subject.failures.empty() ? std::string("failed") : subject.failures.front()));
        }
        if (failing.isEmpty()) {
            showMessage(tr("%1: all %n checked subject(s) pass its %2 rule(s).", nullptr, checked)
                            .arg(QFileInfo(rulesPath).fileName())
                            .arg(rules.size()),
                        false);
            return true;
        }
        showMessage(tr("%1: %n of %2 fail (quantlens-cli check gives the same verdict):\n", nullptr,
                       static_cast<int>(failing.size()))
                            .arg(QFileInfo(rulesPath).fileName())
                            .arg(checked) +
                        failing.mid(0, 8).join(QLatin1Char('\n')) +
                        (failing.size() > 8 ? tr("\n… and %1 more").arg(failing.size() - 8) : QString()),
                    true);
    } catch (const std::exception& e) {
        showMessage(tr("Could not check %1:\n%2").arg(rulesPath, qs(e.what())), true);
    }
    return false;
}

} // namespace ql
