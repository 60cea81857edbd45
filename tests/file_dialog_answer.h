#pragma once
// Answers the next file dialog as a user would, for the tests that open one.

#include <QApplication>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
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
        if (m_since.elapsed() > m_patienceMs) {
            m_poll.stop();
            dialog->reject(); // too late to be the one asked for, or the name never took
            return;
        }
        // As a user does: the filter, the folder, then the name typed in its field. (selectFile()
        // leaves the field alone once it has the focus, and the folder stays selected: Save would
        // open the folder.) Save is pressed on a later tick, once the dialog reads the name back.
        if (dialog->selectedFiles().value(0) != m_name) {
            dialog->selectNameFilter(m_filter); // first: a filter chosen after typing rewrites the suffix
            const QFileInfo file(m_name);
            dialog->setDirectory(file.absolutePath());
            if (auto* field = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
                field->setText(file.fileName());
            return;
        }
        m_poll.stop();
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
