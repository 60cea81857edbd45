#pragma once
// How every result table looks (whole model, plan, diff): one line per row with the reason in a
// tooltip rather than a tall row, no row numbers, alternating rows, whole rows selected, the last
// column taking the rest of the width.
class QTableView;

namespace ql {

void styleResultTable(QTableView* view);

} // namespace ql
