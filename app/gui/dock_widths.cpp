#include "gui/dock_widths.h"

#include <QDockWidget>
#include <QEvent>
#include <QLayout>
#include <QMainWindow>
#include <QResizeEvent>
#include <QTimer>

namespace ql {

DockWidths::DockWidths(QMainWindow* window)
    : QObject(window)
    , m_window(window) {
    window->installEventFilter(this);
    for (QDockWidget* dock : window->findChildren<QDockWidget*>())
        dock->installEventFilter(this);
}

bool DockWidths::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::Resize) return false;
    if (watched == m_window) {
        // The window's layout has squeezed or left its docks by now, or does so in this turn of the
        // event loop: decide once it has.
        QTimer::singleShot(0, this, [this] {
            const int width = m_window->width();
            const bool grew = m_windowWidth >= 0 && width > m_windowWidth;
            const bool shrank = m_windowWidth >= 0 && width < m_windowWidth;
            m_windowWidth = width;
            if (grew) giveBack();
            if (shrank) return;
            for (QDockWidget* dock : m_window->findChildren<QDockWidget*>()) // as first laid out
                if (!m_wanted.contains(dock) && dock->isVisible() && !dock->isFloating())
                    m_wanted[dock] = dock->width();
        });
        return false;
    }
    // A dock resized while the window keeps its width: a separator dragged, a layout restored, the
    // start-up widths. That is the width it comes back to; a squeeze by the window is not.
    auto* dock = static_cast<QDockWidget*>(watched);
    if (!m_givingBack && m_window->width() == m_windowWidth && dock->isVisible() && !dock->isFloating())
        m_wanted[dock] = dock->width();
    return false;
}

void DockWidths::giveBack() {
    QList<QDockWidget*> docks;
    QList<int> widths;
    int total = 0;
    for (QDockWidget* dock : m_window->findChildren<QDockWidget*>()) {
        const int want = m_wanted.value(dock);
        if (!dock->isVisible() || dock->isFloating() || want <= dock->width()) continue;
        const Qt::DockWidgetArea area = m_window->dockWidgetArea(dock);
        if (area != Qt::LeftDockWidgetArea && area != Qt::RightDockWidgetArea) continue;
        docks << dock;
        widths << want;
        total += want;
    }
    if (docks.isEmpty()) return;
    const int room = m_window->width() * 3 / 5;
    if (total > room)
        for (int& w : widths)
            w = w * room / total;
    m_givingBack = true;
    m_window->resizeDocks(docks, widths, Qt::Horizontal);
    m_window->layout()->activate(); // the docks take the widths now, while they are not recorded
    m_givingBack = false;
}

} // namespace ql
