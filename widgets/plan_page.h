#pragma once
// The mixed-precision plan: which candidate formats to measure, a bits-per-weight budget,
// the error-vs-bits front with the chosen point, the chosen format per weight, and the plan's three
// exports. Measuring and the weights' export run in the workbench's JobRunner; choosing re-runs the
// solver on the measurements as the budget changes (no re-measuring).
#include "job/plan_job.h"

#include <QWidget>
#include <functional>
#include <memory>
#include <optional>

class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QToolButton;

namespace ql {

class PlanTableModel;
class Workbench;

class PlanPage : public QWidget {
    Q_OBJECT
public:
    PlanPage(Workbench* bench, QWidget* parent);

    /// The candidates checked in the Formats menu, in the table's order.
    std::vector<PlanCandidate> candidates() const;
    void setCandidatesChecked(const QStringList& names);
    double budget() const;
    void setBudget(double bitsPerWeight);

    /// Measurements from a finished job (or read from a plan file); chooses at the current budget.
    void setMeasurements(std::shared_ptr<const PlanMeasurements> m);
    void clear(const QString& message);
    std::shared_ptr<const PlanMeasurements> measurements() const { return m_measurements; }
    /// The current choice; none before measurements or when the budget fits no plan.
    const std::optional<PlanResult>& result() const { return m_result; }

    /// Writers for the plan's forms (the buttons ask for a path, then call these). False + message.
    bool writeRules(const QString& path, QString* error = nullptr) const;
    bool writeRecipe(const QString& path, QString* error = nullptr) const;
    bool writePlanFile(const QString& path, QString* error = nullptr) const;
    /// Reads a plan file written earlier (here or by `quantlens-cli plan --report`).
    bool readPlanFile(const QString& path, QString* error = nullptr);

    /// Measures the checked candidates on every 2-D weight of the open model (job/plan_job.h).
    void measure();
    /// Starts writing the plan's compressed-tensors checkpoint to `path`; false + message when there
    /// is no plan or the path is refused.
    bool exportWeights(const QString& path);

    PlanTableModel* model() const { return m_model; }
    QCustomPlot* plot() const { return m_plot; }
    QLabel* summary() const { return m_summary; }
    /// The table as shown, through the name filter (filterBox()).
    QTableView* view() const { return m_view; }
    QLineEdit* filterBox() const { return m_filter; }

signals:
    /// A measuring job's result is on the page.
    void measured();
    /// The planned weights were written to `path`, `quantized` of them quantized.
    void weightsExported(const QString& path, int quantized);

private:
    void choose();
    void drawFront();
    void saveAs(const QString& what, const QString& filter,
                bool (PlanPage::*write)(const QString&, QString*) const,
                const std::function<std::vector<std::string>()>& notes = {});

    Workbench* m_bench;
    std::shared_ptr<const PlanMeasurements> m_measurements;
    std::vector<FrontPoint> m_front; // of the measurements: computed once, whatever the budget
    std::optional<PlanResult> m_result;
    QToolButton* m_formats;
    QDoubleSpinBox* m_budget;
    QPushButton* m_measure;
    QLabel* m_summary;
    QCustomPlot* m_plot;
    PlanTableModel* m_model;
    QTableView* m_view;
    QLineEdit* m_filter = nullptr;
    std::vector<QPushButton*> m_exports;
};

} // namespace ql
