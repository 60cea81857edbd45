#pragma once
// The model-wide table ("Quantize all"): one row per tensor, sortable by any column; sorting
// uses core's sortRows so "worst first" means the same as in the CLI.
#include "report/model_table.h"

#include <QAbstractTableModel>
#include <map>
#include <string>
#include <vector>

namespace ql {

class ModelTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        ShapeColumn,
        SqnrColumn,
        WeightedSqnrColumn,
        MaxErrorColumn,
        RelErrorColumn,
        CosineColumn,
        ClippedColumn,
        CodesColumn,
        TimeColumn,
        ErrorColumn,
        ColumnCount
    };
    enum Role { TensorNameRole = Qt::UserRole + 1, CheckFailedRole };

    explicit ModelTableModel(QObject* parent = nullptr);

    /// Replaces the rows, worst first (and forgets the rules' failures).
    void setRows(std::vector<ModelRow> rows);
    const std::vector<ModelRow>& rows() const { return m_rows; }
    /// Marks the rows a rules check failed (Run ▸ Check against rules): tensor name -> every rule it
    /// broke, in the check's words. Marked rows get a red background, the failures in the Problem
    /// column and the tooltip. Empty clears the marks.
    void setCheckFailures(std::map<std::string, std::vector<std::string>> failures);
    /// The rules a row's tensor broke; empty when it passed or no check ran.
    const std::vector<std::string>& checkFailures(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    /// Ascending order = the bad end first (low SQNR, high error), as the table opens.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

private:
    std::vector<ModelRow> m_rows;
    std::map<std::string, std::vector<std::string>> m_checkFailures;
};

} // namespace ql
