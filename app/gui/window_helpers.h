#pragma once
// Small builders the main window uses: its backends, menus and docks.
#include "backend/registry.h"

#include <QKeySequence>
#include <QString>
#include <Qt>
#include <memory>

class QAction;
class QDockWidget;
class QMainWindow;
class QObject;
class QWidget;

namespace ql {

/// Every backend built in (backends/builtin_backends.h), registered.
std::shared_ptr<const BackendRegistry> builtinRegistry();

/// An action whose tooltip names its shortcut, and whose status tip is `tip`.
QAction* makeAction(QObject* parent, const QString& text, const QKeySequence& key, const QString& tip);
/// A movable, floatable dock holding `content` (named `objectName`, which saveState needs).
QDockWidget* addDock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* content,
                     Qt::DockWidgetArea area);

} // namespace ql
