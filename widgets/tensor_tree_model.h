#pragma once
// The file's tensors as a tree by name prefix ("layers" > "0" > "mlp" > "down_proj.weight"),
// with shape, stored type and size columns.
#include "io/tensor_source.h"

#include <QAbstractItemModel>
#include <memory>
#include <string>
#include <vector>

namespace ql {

class TensorTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, ShapeColumn, DTypeColumn, SizeColumn, ColumnCount };
    enum Role {
        TensorNameRole = Qt::UserRole + 1, // full tensor name; empty for prefix nodes
        PathRole,                          // full name or prefix, what the filter matches
        SortRole,                          // numbers as numbers (size column)
    };

    explicit TensorTreeModel(QObject* parent = nullptr);
    ~TensorTreeModel() override;

    void setTensors(const std::vector<TensorInfo>& tensors);
    /// Index (column 0) of a tensor by full name; invalid when absent.
    QModelIndex indexOfTensor(const std::string& name) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node;
    Node* nodeOf(const QModelIndex& index) const;

    std::vector<TensorInfo> m_tensors;
    std::unique_ptr<Node> m_root;
};

} // namespace ql
