// placeholder, filled in below
#include <QTest>
class TestGuiWindow : public QObject {
    Q_OBJECT
};
QTEST_MAIN(TestGuiWindow)
#include "tst_gui_window.moc"
