#pragma once
// Saving from the pages: a save dialog whose answer always has an extension, and text written whole
// or not at all (AtomicFile), shared by every page and the window.
#include <QString>
#include <string>

class QWidget;

namespace ql {

/// The chosen path with the extension of the filter chosen when the name typed has none of the
/// filters' (so "HDF5" with "weights" gives weights.h5, and "x.h5" stays x.h5 under any filter);
/// empty when the dialog was cancelled. `chosenFilter`, when given, gets the filter selected.
QString saveFileName(QWidget* parent, const QString& title, const QString& filters,
                     QString* chosenFilter = nullptr);

/// The rule saveFileName applies to the dialog's answer: `path` kept when it ends in an extension
/// that `filters` names, else given the first extension of `chosen` (the filter selected).
QString withFilterExtension(const QString& path, const QString& chosen, const QString& filters);

/// Writes `text` to `path` atomically; false with the reason in `error` on failure.
bool writeTextFile(const QString& path, const std::string& text, QString* error);

} // namespace ql
