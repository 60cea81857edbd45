#pragma once
// How every result table looks (whole model, plan, diff): one line per row with the reason in a
// tooltip rather than a tall row, no row numbers, alternating rows, whole rows selected, the last
// column taking the rest of the width, long names keeping their last parts (elideName).
#include <initializer_list>

class QAbstractItemModel;
class QLineEdit;
class QModelIndex;
class QTableView;

namespace ql {

void styleResultTable(QTableView* view);

/// Columns sized to their contents, then the name columns capped at a third of the view (at least
/// 160 pixels), so a long tensor name never pushes the figures out of sight; the tooltip and a
/// dragged column edge show the rest. Call after the rows change.
void fitResultColumns(QTableView* view, std::initializer_list<int> nameColumns);

/// A filter box for a result table: `view` shows `model` through a QSortFilterProxyModel (owned by
/// the view) that keeps the rows whose `nameColumn` contains the typed text, case-insensitively; an
/// empty box shows every row. Sorting stays the model's own (the view's sort asks `model`). Returns
/// the box (parented to the view) for the page to place beside the table.
QLineEdit* filterResultRows(QTableView* view, QAbstractItemModel* model, int nameColumn);

/// The row in the page's own model of an index the view gives (through the filter, when there is one).
int sourceRow(const QModelIndex& viewIndex);

} // namespace ql
