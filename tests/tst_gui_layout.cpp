// The main window at the sizes people use: at 1280x800 and 1920x1080 the configuration's
// Compare box and the A-vs-B page are in view without scrolling, the histograms above it not squeezed; docks
// squeezed by a narrow window take their width back when it grows. Screenshots of each size go to
// <build>/screenshots.
#include "gui/main_window.h"
#include "io/safetensors_writer.h"
#include "widgets/config_panel.h"
#include "widgets/plot_page.h"
#include "widgets/qcp.h"
#include "widgets/tensor_view.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace ql;

namespace {

/// Where `w` lies in `area`'s viewport, as the viewport shows it now.
QRect inViewport(const QWidget* w, const QScrollArea* area) {
    return QRect(w->mapTo(area->viewport(), QPoint(0, 0)), w->size());
}

/// Whether `w` is shown whole inside `window` (none of it cut by the window's edge).
bool wholeInWindow(const QWidget* w, const QWidget* window) {
    return window->rect().contains(QRect(w->mapTo(window, QPoint(0, 0)), w->size()));
}

QString screenshotPath(const QString& name) {
    QString out = QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/") + name;
    QDir().mkpath(QFileInfo(out).absolutePath());
    return out;
}

} // namespace

class TestGuiLayout : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_file;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        std::vector<float> v(96 * 256);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * (1 + i % 7));
        m_file = m_dir.filePath(QStringLiteral("layout.safetensors"));
        writeSafetensors(m_file.toStdString(), {{"layers.0.mlp.weight", Tensor::fromFloats({96, 256}, v)}});
    }

    void compareInView_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }

    // Comparing two presets is the app's headline: its Compare box is in view as the window opens,
    // the configuration scrolled to its top, and so is the A-vs-B page once a comparison ran.
    void compareInView() {
        QFETCH(QSize, size);
        MainWindow w;
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY2(w.openFile(m_file), qPrintable(w.errorText()));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        QTest::qWait(50); // the docks take their widths a turn after the window is shown
        auto* scroll = qobject_cast<QScrollArea*>(w.config()->parentWidget()->parentWidget());
        QVERIFY(scroll);
        QCOMPARE(scroll->verticalScrollBar()->value(), 0);
        QComboBox* compare = w.config()->compareBox();
        const QRect box = inViewport(compare, scroll);
        QVERIFY2(scroll->viewport()->rect().contains(box),
                 qPrintable(QStringLiteral("Compare at y %1..%2, the configuration shows 0..%3")
                                .arg(box.top())
                                .arg(box.bottom())
                                .arg(scroll->viewport()->height())));
        QVERIFY(wholeInWindow(scroll->viewport(), &w));

        const int b = compare->findData(QStringLiteral("preset:tensorrt"));
        QVERIFY(b >= 0);
        compare->setCurrentIndex(b);
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY2(shown.wait(60000), qPrintable(w.errorText()));
        PlotPage* page = w.pages()[4];
        w.tabs()->setCurrentWidget(page);
        QTest::qWait(50);
        QVERIFY(page->isVisible());
        for (QCustomPlot* plot : page->plots()) {
            QVERIFY2(wholeInWindow(plot, &w), qPrintable(plot->toolTip().left(40)));
            QVERIFY2(plot->height() >= 120, qPrintable(QString::number(plot->height())));
        }
        QVERIFY(wholeInWindow(page->note(), &w));
        // The value and error histograms above keep the larger share, not their minimum.
        for (int i = 0; i < 2; ++i)
            for (QCustomPlot* plot : w.pages()[i]->plots())
                QVERIFY2(
                    plot->height() >= 200,
                    qPrintable(
                        QStringLiteral("%1: %2 px tall").arg(plot->toolTip().left(40)).arg(plot->height())));
        QVERIFY2(page->note()->height() >= page->note()->minimumHeight(), qPrintable(page->note()->text()));
        QVERIFY(w.grab().save(screenshotPath(
            QStringLiteral("quantlens_compare_%1x%2.png").arg(size.width()).arg(size.height()))));
    }

    // A window made narrow squeezes its docks; made wide again, it gives them their width back (at
    // least what they had, up to a quarter of the window), rather than all of it to the pages.
    void docksComeBackWhenTheWindowGrows() {
        MainWindow w;
        w.resize(1440, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY2(w.openFile(m_file), qPrintable(w.errorText()));
        QList<QDockWidget*> docks;
        for (QDockWidget* d : w.findChildren<QDockWidget*>())
            if (d->isVisible()) docks << d;
        QVERIFY(docks.size() >= 2);
        QTest::qWait(50);
        QList<int> before;
        for (const QDockWidget* d : docks)
            before << d->width();

        w.resize(560, 600);
        QTest::qWait(100);
        bool squeezed = false;
        for (int i = 0; i < docks.size(); ++i)
            squeezed |= docks[i]->width() < before[i];
        QVERIFY2(squeezed, "the narrow window left every dock its width: nothing to check");

        w.resize(1440, 900);
        QTest::qWait(100);
        for (int i = 0; i < docks.size(); ++i) {
            QVERIFY2(docks[i]->isVisible(), qPrintable(docks[i]->windowTitle()));
            QVERIFY2(docks[i]->width() >= before[i] - 2, qPrintable(QStringLiteral("%1: %2 px, was %3")
                                                                        .arg(docks[i]->windowTitle())
                                                                        .arg(docks[i]->width())
                                                                        .arg(before[i])));
        }
        QVERIFY(w.grab().save(screenshotPath(QStringLiteral("quantlens_grown.png"))));

        // A width the user gave a dock by dragging is the one it comes back to.
        QDockWidget* config = w.findChild<QDockWidget*>(QStringLiteral("configuration"));
        QVERIFY(config);
        w.resizeDocks({config}, {420}, Qt::Horizontal);
        QTest::qWait(50);
        const int dragged = config->width();
        QVERIFY2(dragged > before[docks.indexOf(config)], qPrintable(QString::number(dragged)));
        w.resize(700, 700);
        QTest::qWait(100);
        w.resize(1440, 900);
        QTest::qWait(100);
        QVERIFY2(config->width() >= dragged - 2,
                 qPrintable(QStringLiteral("%1 px, dragged to %2").arg(config->width()).arg(dragged)));
    }
};

QTEST_MAIN(TestGuiLayout)
#include "tst_gui_layout.moc"
