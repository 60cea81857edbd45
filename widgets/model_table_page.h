#pragma once
// The model-wide table page: every tensor's headline numbers, worst first; double-click opens one.
#include "report/model_table.h"

#include <QWidget>

class QLabel;
class QTableView;

namespace ql {

class ModelTableModel;

class ModelTablePage : public QWidget {
    Q_OBJECT
public:
    explicit ModelTablePage(QWidget* parent = nullptr);
    void setRows(std::vector<ModelRow> rows);
    /// No rows, and `message` where the summary goes (a model just opened, before any run).
    void clear(const QString& message);
    ModelTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QString summaryText() const;
    bool exportTo(const QString& path) const;

signals:
    void tensorActivated(const QString& name);

private:
    ModelTableModel* m_model;
    QTableView* m_view;
    QLabel* m_summary;
};

} // namespace ql
