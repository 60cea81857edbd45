#pragma once
// Checks shared by the importance-file readers (core/io/importance_file*.cpp); not a public API.
#include "io/importance_file.h"

#include <string>

namespace ql::importance_detail {

/// Refuses an entry with no values, values not a whole number of matrices, or a mean that is
/// not finite or negative; the FileError names the file, the entry and the first bad value.
void checkEntry(const std::string& path, const std::string& name, const ImportanceEntry& entry);
/// Adds `entry` under `name`; a second entry of the same name is refused.
void addEntry(ImportanceFile& file, const std::string& name, ImportanceEntry entry);

} // namespace ql::importance_detail
