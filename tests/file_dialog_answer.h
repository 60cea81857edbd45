#pragma once
// Answers the next file dialog as a user would, for the tests that open one.

#include <QApplication>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QString>
#include <QTimer>
#include <QWidget>

namespace qltest {

/// While in scope, answers the first file dialog that opens: picks `filter`, types `name`,
/// presses Save. The dialog is looked for among the visible top-level windows, so a slow start
/// (a loaded machine) only delays the answer. One that opens after `patienceMs` is closed
/// unanswered instead, and the test fails on the empty answer rather than hanging. Everything
/// stops with the object: no answer outlives the test that asked for it.
class FileDialogAnswer {
public:
    FileDialogAnswer(QString filter, QString name, int patienceMs = 60000)
        : m_filter(std::move(filter))
        , m_name(std::move(name))
        , m_patienceMs(patienceMs) {
        // Qt's own dialog, whatever the platform: a native one cannot be answered from here.
        QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
        m_since.start();
        QObject::connect(&m_poll, &QTimer::timeout, [this] { poll(); });
        m_poll.start(20);
    }
    FileDialogAnswer(const FileDialogAnswer&) = delete;
    FileDialogAnswer& operator=(const FileDialogAnswer&) = delete;

    bool answered() const { return m_answered; }

private:
    static QFileDialog* openDialog() {
        if (auto* modal = qobject_cast<QFileDialog*>(QApplication::activeModalWidget())) return modal;
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (auto* dialog = qobject_cast<QFileDialog*>(w); dialog && dialog->isVisible()) return dialog;
        }
        return nullptr;
    }

    void poll() {
        QFileDialog* dialog = openDialog();
        if (!dialog) return;
        m_poll.stop();
        if (m_since.elapsed() > m_patienceMs) {
            dialog->reject(); // too late to be the one asked for
            return;
        }
        dialog->selectNameFilter(m_filter); // first: a filter chosen after typing rewrites the suffix
        dialog->selectFile(m_name);
        m_answered = true;
        QMetaObject::invokeMethod(dialog, "accept"); // Save (a protected slot)
    }

    QString m_filter;
    QString m_name;
    int m_patienceMs;
    QElapsedTimer m_since;
    QTimer m_poll;
    bool m_answered = false;
};

} // namespace qltest
