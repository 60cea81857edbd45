#include "widgets/save_file.h"

#include "io/atomic_file.h"
#include "widgets/qt_util.h"

#include <QFileDialog>
#include <QRegularExpression>

namespace ql {
namespace {

// The extensions a filter list names ("HDF5 (*.h5 *.hdf5)" gives .h5 and .hdf5), in order.
QStringList extensionsOf(const QString& filters) {
    static const QRegularExpression patterns(QStringLiteral("\\*(\\.[\\w.]+)"));
    QStringList extensions;
    for (auto it = patterns.globalMatch(filters); it.hasNext();)
        extensions << it.next().captured(1);
    return extensions;
}

} // namespace

QString withFilterExtension(const QString& path, const QString& chosen, const QString& filters) {
    // A name typed with the extension of any filter offered is what the user asked for (x.h5 with
    // the safetensors filter still selected is an HDF5 file, not x.h5.safetensors).
    for (const QString& e : extensionsOf(filters) + extensionsOf(chosen))
        if (path.endsWith(e, Qt::CaseInsensitive)) return path;
    const QStringList wanted = extensionsOf(chosen);
    return wanted.isEmpty() ? path : path + wanted.front();
}

QString saveFileName(QWidget* parent, const QString& title, const QString& filters, QString* chosenFilter) {
    QString chosen;
    QString path = QFileDialog::getSaveFileName(parent, title, {}, filters, &chosen);
    if (chosenFilter) *chosenFilter = chosen;
    if (path.isEmpty()) return path;
    return withFilterExtension(path, chosen, filters);
}

bool writeTextFile(const QString& path, const std::string& text, QString* error) {
    try {
        AtomicFile f(ss(path));
        f.write(text.data(), text.size());
        f.commit();
        return true;
    } catch (const std::exception& e) {
        if (error) *error = qs(e.what());
        return false;
    }
}

} // namespace ql
