// MainWindow showing a JSON report written earlier: one process's, a shard's part, or a merge.
#include "base/whole_number.h"
#include "gui/main_window.h"
#include "job/report_parts.h"
#include "report/model_table.h"
#include "report/report_read.h"
#include "widgets/headline_strip.h"
#include "widgets/model_table_page.h"
#include "widgets/plot_page.h"
#include "widgets/qt_util.h"

#include <QFileInfo>
#include <QStatusBar>
#include <QTabWidget>

namespace ql {

bool MainWindow::isReportPath(const QString& path) {
    const QString name = QFileInfo(path).fileName().toLower();
    return name.endsWith(QStringLiteral(".json")) && !name.endsWith(QStringLiteral(".index.json")) &&
           !name.endsWith(QStringLiteral(".qlsession.json"));
}

bool MainWindow::openReport(const QString& path) {
    nlohmann::json report;
    std::vector<ModelRow> rows;
    try {
        report = readReportFile(ss(path));
        if (!report.is_object() || !report.contains("tensors"))
            throw FileError(ss(path) + ": not a QuantLens report (no \"tensors\" list)");
        rows = modelRows(report["tensors"], ss(path));
    } catch (const std::exception& e) {
        showMessage(tr("Could not open %1:\n%2").arg(path, qs(e.what())), true);
        return false;
    }
    m_report = std::make_shared<const nlohmann::json>(std::move(report["tensors"]));
    m_reportPath = path;
    m_model.reset();
    m_modelTable->setRows(std::move(rows));
    m_tabs->setCurrentWidget(m_modelTable);
    m_headline->clear();
    for (PlotPage* p : m_pages)
        p->clear(tr("Double-click a tensor in the table to see its report."));
    QString what = tr("Report %1: %2 tensors of %3.")
                       .arg(QFileInfo(path).fileName())
                       .arg(m_report->size())
                       .arg(qs(report.value("file", std::string("?"))));
    if (report.contains("shard") && report["shard"].is_object())
        what += tr(" A part: shard %1 of %2 (merge the parts with quantlens-cli merge).")
                    .arg(wholeNumber(report["shard"].value("index", nlohmann::json())).value_or(-1))
                    .arg(wholeNumber(report["shard"].value("count", nlohmann::json())).value_or(0));
    showMessage(what, false);
    emit modelShown();
    return true;
}

void MainWindow::showReportedTensor(const QString& name) {
    for (const auto& entry : *m_report) {
        if (!entry.is_object() || entry.value("name", std::string()) != ss(name)) continue;
        try {
            TensorReport r = reportFromJson(entry);
            if (!r.quantized()) {
                showMessage(tr("%1: %2").arg(
                                name, qs(r.error.empty() ? "kept unquantized: " + r.passedThrough : r.error)),
                            !r.error.empty());
                return;
            }
            auto outcome = std::make_shared<TensorOutcome>();
            outcome->a.label = r.backend;
            outcome->a.report = std::move(r);
            showOutcome(std::move(outcome));
            statusBar()->showMessage(
                tr("%1 from the report %2").arg(name, QFileInfo(m_reportPath).fileName()), 10000);
        } catch (const std::exception& e) {
            showMessage(tr("%1 in %2: %3").arg(name, m_reportPath, qs(e.what())), true);
        }
        return;
    }
}

} // namespace ql
