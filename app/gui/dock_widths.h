#pragma once
// Keeps the side docks' widths across a narrow spell: a window made narrow squeezes its docks, and
// QMainWindow gives all the width of a window made wide again to the central widget, so the docks
// would stay squeezed. This remembers each dock's width as the user (or the start-up layout) set
// it, and gives it back as the window grows.
#include <QHash>
#include <QObject>

class QDockWidget;
class QMainWindow;

namespace ql {

class DockWidths : public QObject {
    Q_OBJECT
public:
    /// Watches `window` and every dock it holds now.
    explicit DockWidths(QMainWindow* window);
    /// The width `dock` comes back to (0: none recorded).
    int wanted(const QDockWidget* dock) const { return m_wanted.value(dock); }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// Widens each squeezed dock to its wanted width, the docks together to at most 3/5 of the window.
    void giveBack();

    QMainWindow* m_window;
    QHash<const QDockWidget*, int> m_wanted;
    int m_windowWidth = -1; // the window's width once its last resize was handled
    bool m_givingBack = false;
};

} // namespace ql
