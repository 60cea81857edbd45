// Renders the main window with results for the bundled sample model (or a fixture of our own when
// the sample is missing) to <build>/screenshots/quantlens_sample.png, so anyone can look at it.
#include "gui/main_window.h"
#include "io/safetensors_writer.h"
#include "plot_checks.h"
#include "widgets/clipping_page.h"
#include "widgets/config_panel.h"
#include "widgets/model_table_page.h"
#include "widgets/plot_page.h"
#include "widgets/qcp.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_view.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <cmath>
#include <functional>

using namespace ql;

namespace {

// What a person sees of each plot on screen in `image` (the window grabbed): a readable size, a title
// that fits the plot's width, data in a graph, and coloured pixels drawn inside its own rectangle.
void verifyPlotsOnScreen(const MainWindow& window, const QImage& image) {
    int checked = 0;
    for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
        if (!plot->isVisible() || plot->visibleRegion().isEmpty()) continue;
        ++checked;
        const QString which = plot->toolTip().left(60);
        QVERIFY2(plot->width() >= 200 && plot->height() >= 120, qPrintable(which));
        QString title;
        if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) {
            title = t->text();
            QVERIFY2(!title.isEmpty(), qPrintable(which));
            QVERIFY2(QFontMetrics(t->font()).horizontalAdvance(title) <= plot->width(), qPrintable(title));
        }
        // A legend never covers the data: it sits outside the axes, whole, within the plot's width.
        if (plot->legend->visible()) {
            QVERIFY2(!plot->legend->outerRect().intersects(plot->axisRect()->rect()), qPrintable(which));
            for (int i = 0; i < plot->legend->itemCount(); ++i)
                QVERIFY2(plot->legend->item(i)->outerRect().right() <= plot->width(), qPrintable(which));
        }
        qltest::verifyTickLabelsApart(plot, which);
        if (QTest::currentTestFailed()) return;
        bool hasData = false;
        for (int g = 0; g < plot->graphCount(); ++g)
            hasData |= !plot->graph(g)->data()->isEmpty();
        for (int p = 0; p < plot->plottableCount(); ++p) {
            QCPAbstractPlottable* item = plot->plottable(p);
            hasData |= item->interface1D() && item->interface1D()->dataCount() > 0;
            if (auto* map = qobject_cast<QCPColorMap*>(item)) hasData |= map->data()->keySize() > 0;
        }
        if (!hasData) { // nothing to draw is said in the title ("Where codes differ: nowhere, …")
            QVERIFY2(title.contains(QStringLiteral("nowhere")),
                     qPrintable(which + QStringLiteral(": no data")));
            continue;
        }
        const QRect r(plot->mapTo(&window, QPoint(0, 0)), plot->size());
        int coloured = 0;
        for (int y = r.top(); y <= r.bottom(); y += 2)
            for (int x = r.left(); x <= r.right(); x += 2)
                coloured += QColor(image.pixel(x, y)).hsvSaturation() > 80;
        QVERIFY2(coloured > 50,
                 qPrintable(QStringLiteral("%1: %2 coloured pixels").arg(which).arg(coloured)));
    }
    QVERIFY(checked >= 2);
}

// Before any result, every plot's axes still span most of it (an empty legend once narrowed them).
void verifyEmptyPlotsKeepTheirWidth(const MainWindow& window) {
    int checked = 0;
    for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
        if (!plot->isVisible() || plot->visibleRegion().isEmpty()) continue;
        ++checked;
        QVERIFY2(plot->axisRect()->width() >= plot->width() / 2,
                 qPrintable(QStringLiteral("%1: axes %2 px wide in a %3 px plot")
                                .arg(plot->toolTip().left(60))
                                .arg(plot->axisRect()->width())
                                .arg(plot->width())));
    }
    QVERIFY(checked >= 2);
}

// Every tensor name in the browser reads whole at the window's size: no row's text is elided.
void verifyNamesReadable(const MainWindow& window) {
    QTreeView* view = window.browser()->view();
    view->expandAll();
    QApplication::processEvents();
    const QFontMetrics fm(view->font());
    int names = 0;
    std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int row = 0; row < view->model()->rowCount(parent); ++row) {
            const QModelIndex i = view->model()->index(row, 0, parent);
            const QString text = i.data().toString();
            const int room = view->visualRect(i).width() - view->iconSize().width();
            QVERIFY2(fm.horizontalAdvance(text) <= room, qPrintable(QStringLiteral("'%1' needs %2 px, has %3")
                                                                        .arg(text)
                                                                        .arg(fm.horizontalAdvance(text))
                                                                        .arg(room)));
            ++names;
            walk(i);
        }
    };
    walk({});
    QVERIFY(names > 0);
}

// Each page's note under its plots reads whole, clear of the plots, at the window's size (a word-wrapped
// label must not be squeezed below the lines its width needs).
void verifyNotesClear(const MainWindow& window) {
    int checked = 0;
    for (const PlotPage* page : window.findChildren<PlotPage*>()) {
        const QLabel* note = page->note();
        if (!page->isVisible() || !note->isVisible() || note->text().isEmpty()) continue;
        ++checked;
        const QString which = note->text().left(50);
        QVERIFY2(note->height() >= note->minimumHeight(),
                 qPrintable(QStringLiteral("%1: %2 px tall, needs %3")
                                .arg(which)
                                .arg(note->height())
                                .arg(note->minimumHeight())));
        const QRect n(note->mapTo(page, QPoint(0, 0)), note->size());
        for (const QCustomPlot* plot : page->plots())
            QVERIFY2(!plot->isVisible() ||
                         !QRect(plot->mapTo(page, QPoint(0, 0)), plot->size()).intersects(n),
                     qPrintable(which + QStringLiteral(": covered by a plot")));
    }
    QVERIFY(checked >= 2);
}

} // namespace

class TestGuiScreenshot : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void sampleModelWithResults() {
        QString file = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        QTemporaryDir dir;
        if (!QFileInfo::exists(file)) {
            std::vector<float> v(96 * 64);
            for (std::size_t i = 0; i < v.size(); ++i)
                v[i] = static_cast<float>(std::sin(0.37 * i) * (1 + i % 7));
            file = dir.filePath(QStringLiteral("fixture.safetensors"));
            writeSafetensors(file.toStdString(), {{"layer.weight", Tensor::fromFloats({96, 64}, v)}});
        }
        MainWindow window;
        window.show();
        QVERIFY(window.openFile(file));
        QTest::qWait(50);
        verifyEmptyPlotsKeepTheirWidth(window);
        verifyNamesReadable(window);
        const auto* tensorsDock = window.findChild<QDockWidget*>(QStringLiteral("tensors"));
        QVERIFY(tensorsDock);
        const int dockWidth = tensorsDock->width();
        const std::string tensor = window.browser()->firstTensorOfRank(2);
        QVERIFY(!tensor.empty());
        QVERIFY(window.selectTensor(QString::fromStdString(tensor)));
        QSignalSpy shown(window.tensorView(), &TensorView::shown);
        window.quantizeSelected();
        QVERIFY(shown.wait(60000));
        QTest::qWait(50);

        const QString out = QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_sample.png");
        QVERIFY(QDir().mkpath(QFileInfo(out).absolutePath()));
        const QImage image = window.grab().toImage();
        QVERIFY(image.save(out));
        QVERIFY(QFileInfo(out).size() > 10000);
        // Not a blank window: the plots put many distinct colours on it.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 50, qPrintable(QStringLiteral("only %1 colours").arg(colours.size())));
        verifyPlotsOnScreen(window, image);
        qInfo("screenshot: %s", qPrintable(out));
        window.tabs()->setCurrentIndex(1); // timing
        QTest::qWait(50);
        QVERIFY(window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_timing.png")));

        // The same tensor compared against TensorRT's arithmetic, with the A-vs-B page in front,
        // and the whole-model table: the pages the first picture cannot show at once.
        const int b = window.config()->compareBox()->findData(QStringLiteral("preset:tensorrt"));
        QVERIFY(b >= 0);
        window.config()->compareBox()->setCurrentIndex(b);
        window.quantizeSelected();
        QVERIFY(shown.wait(60000));
        window.tabs()->setCurrentIndex(2);
        QTest::qWait(50);
        const QImage compared = window.grab().toImage();
        QVERIFY(compared.save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_compare.png")));
        verifyPlotsOnScreen(window, compared);
        QCOMPARE(tensorsDock->width(), dockWidth); // an A-vs-B run does not squeeze the names
        verifyNotesClear(window);
        // A small window: the notes wrap to more lines, and still read whole.
        window.resize(760, 760);
        QTest::qWait(100);
        QVERIFY(window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_small.png")));
        verifyNotesClear(window);
        QSignalSpy model(window.modelTable(), &ModelTablePage::shown);
        window.quantizeAll();
        QVERIFY(model.wait(120000));
        QTest::qWait(50);
        QVERIFY(window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_model.png")));
    }

    // torch against aclnnQuantize on values that sit on x.5 steps: the A-vs-B page must show the
    // mismatches, where they are, and name reciprocal-vs-division as the cause.
    void reciprocalVersusDivisionOnScreen() {
        const float s = 1.0f / 127.0f;
        std::vector<float> v(64 * 256);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>((static_cast<double>(i * 37 % 253) - 126.5) * static_cast<double>(s));
        v[0] = 1.0f; // amax 1: the calibrated scale is fl32(1/127)
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("ties.safetensors"));
        writeSafetensors(file.toStdString(), {{"layers.0.weight", Tensor::fromFloats({64, 256}, v)}});
        MainWindow window;
        window.show();
        QVERIFY(window.openFile(file));
        QVERIFY(window.selectTensor(QStringLiteral("layers.0.weight")));
        const int b = window.config()->compareBox()->findData(QStringLiteral("preset:aclnn-quantize"));
        QVERIFY(b >= 0);
        window.config()->compareBox()->setCurrentIndex(b);
        QSignalSpy shown(window.tensorView(), &TensorView::shown);
        window.quantizeSelected();
        QVERIFY(shown.wait(60000));
        window.tabs()->setCurrentIndex(2);
        QTest::qWait(50);
        QString text;
        for (const QLabel* l : window.tabs()->currentWidget()->findChildren<QLabel*>())
            text += l->text();
        QVERIFY2(text.contains(QStringLiteral("codes differ")) && text.contains(QStringLiteral("reciprocal")),
                 qPrintable(text));
        QVERIFY(
            window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_mismatch.png")));
    }

    // NVFP4 on a 1024×4096 tensor: 262,144 blocks, drawn in spans of 128. The worst block must still
    // show (the SQNR line's lowest point is its SQNR, drawn over its span), and the page must say what
    // a bar and a point stand for.
    void blocksInSpansKeepTheWorstBlock() {
        const std::int64_t rows = 1024, cols = 4096;
        std::vector<float> v(static_cast<std::size_t>(rows * cols));
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>(std::sin(0.013 * static_cast<double>(i)) * (1 + i % 5));
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("blocks.safetensors"));
        writeSafetensors(file.toStdString(), {{"proj.weight", Tensor::fromFloats({rows, cols}, v)}});
        MainWindow window;
        window.resize(1100, 760);
        window.show();
        QVERIFY(window.openFile(file));
        QVERIFY(window.selectTensor(QStringLiteral("proj.weight")));
        const int nvfp4 = window.config()->presetBox()->findData(static_cast<int>(Preset::NVFP4));
        QVERIFY(nvfp4 >= 0);
        window.config()->presetBox()->setCurrentIndex(nvfp4);
        QSignalSpy shown(window.tensorView(), &TensorView::shown);
        window.quantizeSelected();
        QVERIFY2(shown.wait(60000), qPrintable(window.errorText()));
        auto* page = window.findChild<ClippingPage*>();
        QVERIFY(page);
        window.tabs()->setCurrentWidget(page);
        QTest::qWait(50);

        const auto& groups = window.tensorView()->outcome()->a.report.analysis.clipping.groups();
        QCOMPARE(groups.size(), std::size_t(rows * cols / 16));
        std::size_t worstGroup = 0;
        for (std::size_t g = 0; g < groups.size(); ++g)
            if (groups[g].sqnrDb() < groups[worstGroup].sqnrDb()) worstGroup = g;
        const auto plots = page->findChildren<QCustomPlot*>();
        QCOMPARE(plots.size(), 2);
        QCPGraph* sqnr = plots[1]->graph(0);
        QCOMPARE(sqnr->dataCount(), 2048); // 262,144 blocks in spans of 128
        double lowest = INFINITY, lowestKey = -1;
        for (auto it = sqnr->data()->constBegin(); it != sqnr->data()->constEnd(); ++it)
            if (it->value < lowest) lowest = it->value, lowestKey = it->key;
        QCOMPARE(lowest, groups[worstGroup].sqnrDb());
        QVERIFY(std::fabs(lowestKey - static_cast<double>(worstGroup)) <= 64); // its span's middle
        QString text;
        for (const QLabel* l : page->findChildren<QLabel*>())
            text += l->text();
        QVERIFY2(text.contains(QStringLiteral("spans of 128")) &&
                     text.contains(QStringLiteral("worst group")),
                 qPrintable(text));
        QVERIFY(window.grab().save(
            QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_nvfp4_spans.png")));
    }

    // Int8 groups of 16 on a 1024×4096 tensor with scales from the file: every group's own range but
    // group 131000's, a twentieth of its step, so that group alone loses more to clipping than to rounding.
    // Drawn in spans of 128, the span holding it must be red and no other.
    void spanWithOneClippedGroupIsRed() {
        const std::int64_t rows = 1024, cols = 4096, groupSize = 16, groups = cols / groupSize;
        std::vector<float> v(static_cast<std::size_t>(rows * cols)),
            scales(static_cast<std::size_t>(rows * groups));
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>(std::sin(0.013 * static_cast<double>(i)) * (1 + i % 5));
        for (std::size_t g = 0; g < scales.size(); ++g) {
            float amax = 0;
            for (std::int64_t k = 0; k < groupSize; ++k)
                amax = std::max(amax, std::fabs(v[g * groupSize + static_cast<std::size_t>(k)]));
            scales[g] = amax / (g == 131000 ? 127.0f * 20.0f : 127.0f) * 1.0001f; // (no clipping by rounding)
        }
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("groups.safetensors"));
        writeSafetensors(file.toStdString(),
                         {{"proj.weight", Tensor::fromFloats({rows, cols}, v)},
                          {"proj.weight_scale", Tensor::fromFloats({rows, groups}, scales)}});
        MainWindow window;
        window.resize(1100, 760);
        window.show();
        QVERIFY(window.openFile(file));
        QVERIFY(window.selectTensor(QStringLiteral("proj.weight")));
        QuantSpec spec;
        spec.preset = Preset::Custom;
        spec.target = Target::Int8;
        spec.scheme = Scheme::PerGroup;
        spec.axes = {1};
        spec.groupSize = groupSize;
        spec.calibration.method = CalibMethod::Explicit;
        window.config()->setSpec(spec);
        window.config()->setParamFiles({file.toStdString() + ":proj.weight_scale", {}});
        QSignalSpy shown(window.tensorView(), &TensorView::shown);
        window.quantizeSelected();
        QVERIFY2(shown.wait(60000), qPrintable(window.errorText()));
        auto* page = window.findChild<ClippingPage*>();
        QVERIFY(page);
        QCOMPARE(page->highlightedGroups(), 1);
        window.tabs()->setCurrentWidget(page);
        QTest::qWait(50);
        const auto plots = page->findChildren<QCustomPlot*>();
        QCOMPARE(plots.size(), 2);
        QCPBars* red = nullptr;
        for (int i = 0; i < plots[0]->plottableCount(); ++i)
            if (plots[0]->plottable(i)->name() == QStringLiteral("clipping dominates"))
                red = qobject_cast<QCPBars*>(plots[0]->plottable(i));
        QVERIFY(red);
        QCOMPARE(red->dataCount(), 2048);
        for (auto it = red->data()->constBegin(); it != red->data()->constEnd(); ++it) {
            const bool holdsIt = std::fabs(it->key - 131000.0) <= 64;
            QVERIFY2((it->value > 0) == holdsIt, qPrintable(QString::number(it->key)));
        }
        QVERIFY(window.grab().save(
            QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_group_spans.png")));
    }
};

QTEST_MAIN(TestGuiScreenshot)
#include "tst_gui_screenshot.moc"
