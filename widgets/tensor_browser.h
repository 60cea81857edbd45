#pragma once
// The tensor browser page: a filter box over the tensor tree; selecting a leaf emits its name.
#include "io/tensor_source.h"

#include <QWidget>
#include <memory>
#include <string>

class QLineEdit;
class QTreeView;
class QSortFilterProxyModel;

namespace ql {

class TensorTreeModel;

class TensorBrowser : public QWidget {
    Q_OBJECT
public:
    explicit TensorBrowser(QWidget* parent = nullptr);

    void setSource(const TensorSource* source);
    /// Selects (and reveals) a tensor; false when it is not in the file.
    bool selectTensor(const std::string& name);
    /// The selected tensor's full name; empty when none or a prefix node is selected.
    std::string selectedTensor() const;
    /// First tensor (file order) of the given rank with a floating dtype; empty when none.
    std::string firstTensorOfRank(int rank) const;

    TensorTreeModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QLineEdit* filterEdit() const { return m_filter; }
    QTreeView* view() const { return m_view; }

signals:
    void tensorSelected(const QString& name);

private:
    const TensorSource* m_source = nullptr;
    TensorTreeModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QTreeView* m_view;
};

} // namespace ql
