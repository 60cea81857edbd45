#pragma once
// The plan's table: one row per planned weight with the format chosen for it, its bits per weight,
// SQNR and the (weighted) squared error the choice costs; then one row per tensor not planned (kept
// as it is), with the reason.
#include "job/plan_job.h"

#include <QAbstractTableModel>
#include <memory>

namespace ql {

class PlanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, FormatColumn, BitsColumn, SqnrColumn, ErrorColumn, NoteColumn, ColumnCount };

    explicit PlanTableModel(QObject* parent = nullptr);

    /// Shows `result`'s choice over `m` (kept alive by the model); null clears.
    void setPlan(std::shared_ptr<const PlanMeasurements> m, const PlanResult& result);

    /// The planned weights' rows come first, then the tensors not planned.
    int plannedRows() const { return static_cast<int>(m_choice.size()); }
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const PlanMeasurements> m_measurements;
    std::vector<int> m_choice;
};

} // namespace ql
