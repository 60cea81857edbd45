#include "gui/window_helpers.h"

#include "builtin_backends.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>

namespace ql {

std::shared_ptr<const BackendRegistry> builtinRegistry() {
    auto r = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*r);
    return r;
}

QAction* makeAction(QObject* parent, const QString& text, const QKeySequence& key, const QString& tip) {
    auto* a = new QAction(text, parent);
    a->setShortcut(key);
    a->setToolTip(tip + (key.isEmpty()
                             ? QString()
                             : QStringLiteral(" (%1)").arg(key.toString(QKeySequence::NativeText))));
    a->setStatusTip(tip);
    return a;
}

QDockWidget* addDock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* content,
                     Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, window);
    d->setObjectName(objectName); // saveState needs it
    d->setWidget(content);
    d->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    window->addDockWidget(area, d);
    return d;
}

} // namespace ql
