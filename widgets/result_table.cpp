#include "widgets/result_table.h"

#include "widgets/name_elision.h"

#include <QHeaderView>
#include <QTableView>
#include <algorithm>

namespace ql {

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

} // namespace ql
