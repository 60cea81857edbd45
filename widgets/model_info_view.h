#pragma once
// What the open file says about its model (TensorSource::modelInfo): GGUF's key/values, ONNX's
// opset and producer, safetensors' __metadata__, as a two-column table with a filter box.
#include <QWidget>

class QLabel;
class QStandardItemModel;
class QTableView;

namespace ql {

class TensorSource;
class Workbench;

class ModelInfoView : public QWidget {
    Q_OBJECT
public:
    /// Follows `bench`'s open model.
    explicit ModelInfoView(Workbench* bench, QWidget* parent = nullptr);

    /// Shows what `source` says (null: nothing).
    void setSource(const TensorSource* source);
    /// Rows of (key, value), as shown.
    QStandardItemModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }

private:
    QStandardItemModel* m_model;
    QTableView* m_view;
    QLabel* m_empty;
};

} // namespace ql
