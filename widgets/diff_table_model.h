#pragma once
// The diff table: one row per matched pair of two checkpoints, pairs that could not be compared
// first, then the worst SQNR first; sortable by any column.
#include "job/diff_job.h"

#include <QAbstractTableModel>
#include <memory>
#include <vector>

namespace ql {

class DiffTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        NameBColumn,
        MatchedColumn,
        ShapeColumn,
        SqnrColumn,
        MaxDiffColumn,
        MaxUlpColumn,
        CosineColumn,
        CodesColumn,
        NoteColumn,
        ColumnCount
    };
    enum Role { DiffIndexRole = Qt::UserRole + 1 };

    explicit DiffTableModel(QObject* parent = nullptr);

    /// Replaces the rows (none for a null outcome), worst first.
    void setOutcome(std::shared_ptr<const DiffOutcome> outcome);
    /// The pair shown in `row`.
    const TensorDiff& diffAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    /// Ascending = the bad end first (failures, low SQNR, large differences).
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

private:
    std::shared_ptr<const DiffOutcome> m_outcome;
    std::vector<std::size_t> m_order; // row -> index into m_outcome->diffs
};

} // namespace ql
