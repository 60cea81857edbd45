#include "widgets/model_info_view.h"

#include "io/tensor_source.h"
#include "widgets/result_table.h"
#include "widgets/workbench.h"

#include <QLabel>
#include <QLineEdit>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

namespace ql {

ModelInfoView::ModelInfoView(Workbench* bench, QWidget* parent)
    : QWidget(parent)
    , m_model(new QStandardItemModel(0, 2, this))
    , m_view(new QTableView(this))
    , m_empty(new QLabel(this)) {
    m_model->setHorizontalHeaderLabels({tr("Key"), tr("Value")});
    styleResultTable(m_view);
    QLineEdit* filter = filterResultRows(m_view, m_model, 0);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_empty->setWordWrap(true);
    m_empty->setTextFormat(Qt::PlainText);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(filter);
    layout->addWidget(m_empty);
    layout->addWidget(m_view, 1);
    connect(bench, &Workbench::sourceChanged, this, [this, bench] { setSource(bench->source().get()); });
    setSource(bench->source().get());
}

void ModelInfoView::setSource(const TensorSource* source) {
    m_model->removeRows(0, m_model->rowCount());
    const std::vector<ModelInfoEntry> info = source ? source->modelInfo() : std::vector<ModelInfoEntry>{};
    for (const ModelInfoEntry& e : info) {
        auto* key = new QStandardItem(QString::fromStdString(e.key));
        auto* value = new QStandardItem(QString::fromStdString(e.value));
        key->setToolTip(key->text());
        value->setToolTip(value->text());
        m_model->appendRow({key, value});
    }
    m_empty->setText(!source        ? tr("Open a model to see what its file says about it.")
                     : info.empty() ? tr("The file says nothing about its model beyond its tensors.")
                                    : QString());
    m_empty->setVisible(info.empty());
    fitResultColumns(m_view, {0});
}

} // namespace ql
