#pragma once
// The file dialogs' filters, one place for each.
#include <QString>

namespace ql {

/// Every format a tensor source reads (the Open and Diff against dialogs).
QString modelFileFilter();
/// The importance files Importance::open reads.
QString importanceFileFilter();

} // namespace ql
