#include "widgets/save_file.h"

#include "io/atomic_file.h"
#include "widgets/qt_util.h"

#include <QFileDialog>
#include <QRegularExpression>

namespace ql {

QString saveFileName(QWidget* parent, const QString& title, const QString& filters) {
    QString chosen;
    QString path = QFileDialog::getSaveFileName(parent, title, {}, filters, &chosen);
    if (path.isEmpty()) return path;
    static const QRegularExpression patterns(QStringLiteral("\\*(\\.[\\w.]+)"));
    QStringList extensions;
    for (auto it = patterns.globalMatch(chosen); it.hasNext();)
        extensions << it.next().captured(1);
    for (const QString& e : extensions)
        if (path.endsWith(e, Qt::CaseInsensitive)) return path;
    return extensions.isEmpty() ? path : path + extensions.front();
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
