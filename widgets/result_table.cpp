#include "widgets/result_table.h"

#include "widgets/name_elision.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <algorithm>

namespace ql {

namespace {

/// Filters; sorting is left to the page's model, which knows how its figures order.
class NameFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void sort(int column, Qt::SortOrder order) override {
        if (sourceModel()) sourceModel()->sort(column, order);
    }
};

} // namespace

void styleResultTable(QTableView* view) {
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view->horizontalHeader()->setStretchLastSection(true);
    view->verticalHeader()->setVisible(false);
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideMiddle); // layer numbers and suffixes stay readable
    view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->setAlternatingRowColors(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
}

void fitResultColumns(QTableView* view, std::initializer_list<int> nameColumns) {
    view->resizeColumnsToContents();
    const int nameRoom = std::max(160, view->viewport()->width() / 3);
    for (int c : nameColumns) {
        view->setColumnWidth(c, std::min(view->columnWidth(c), nameRoom));
        // Names keep their last parts, not both ends: If_1_param_conv/weight and If_2_… read apart.
        if (!view->itemDelegateForColumn(c)) view->setItemDelegateForColumn(c, new NameElisionDelegate(view));
    }
}

QLineEdit* filterResultRows(QTableView* view, QAbstractItemModel* model, int nameColumn) {
    auto* proxy = new NameFilter(view);
    proxy->setSourceModel(model);
    proxy->setFilterKeyColumn(nameColumn);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    view->setModel(proxy);
    auto* box = new QLineEdit(view);
    box->setPlaceholderText(QObject::tr("Filter by name"));
    box->setClearButtonEnabled(true);
    QObject::connect(box, &QLineEdit::textChanged, proxy, &QSortFilterProxyModel::setFilterFixedString);
    return box;
}

int sourceRow(const QModelIndex& viewIndex) {
    const auto* proxy = qobject_cast<const QAbstractProxyModel*>(viewIndex.model());
    return proxy ? proxy->mapToSource(viewIndex).row() : viewIndex.row();
}

} // namespace ql
