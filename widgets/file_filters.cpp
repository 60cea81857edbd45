#include "widgets/file_filters.h"

#include "io/model_formats.h"

#include <QCoreApplication>

namespace ql {

QString modelFileFilter() {
    return QString::fromStdString(modelFileDialogFilter()); // core/io/model_formats' table
}

QString importanceFileFilter() {
    return QCoreApplication::translate("ql", "Importance (*.dat *.gguf *.safetensors);;All files (*)");
}

} // namespace ql
