// Drives the real main window under the offscreen platform: open a fixture, select a tensor,
// change scheme and dtype, run, and check what the pages hold; compare two presets; invalid
// combinations explained inline; Quantize all and the model table; cancel a long run; stale
// results dropped; malformed files; exports and sessions.
#include "gui/main_window.h"
#include "io/printable.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "quant/reference.h"
#include "quantlens/config.h"
#include "widgets/config_panel.h"
#include "widgets/headline_strip.h"
#include "widgets/histogram_pages.h"
#include "widgets/job_runner.h"
#include "widgets/model_table_model.h"
#include "widgets/model_table_page.h"
#include "widgets/qcp.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_tree_model.h"
#include "widgets/tensor_view.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QProcess>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

using namespace ql;

namespace {

Tensor wave(Shape shape, double phase) {
    std::vector<float> v(static_cast<std::size_t>(elementCount(shape)));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(std::sin(phase + 0.61 * i) * (0.2 + (i % 13) * 0.05) +
                                  (i % 97 == 0 ? 3.0 : 0.0));
    return Tensor::fromFloats(std::move(shape), v);
}

void chooseData(QComboBox* box, const QVariant& data) {
    const int i = box->findData(data);
    QVERIFY2(i >= 0, qPrintable(data.toString()));
    box->setCurrentIndex(i);
}

} // namespace

class TestGuiWindow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_file;
    QString m_bigFile;

    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_file = path("fixture.safetensors");
        writeSafetensors(m_file.toStdString(), {{"layers.0.mlp.weight", wave({64, 128}, 0.0)},
                                                {"layers.0.mlp.bias", wave({64}, 1.0)},
                                                {"layers.1.attn.weight", wave({32, 96}, 2.0)}});
        // Many large tensors with an expensive calibration: a run long enough to cancel.
        m_bigFile = path("big.safetensors");
        std::vector<NamedTensor> big;
        big.reserve(24);
        for (int i = 0; i < 24; ++i)
            big.push_back({"block." + std::to_string(i) + ".weight", wave({512, 1024}, i)});
        writeSafetensors(m_bigFile.toStdString(), big);
    }

    // What a user waits for on a 16M-element tensor: the job, then every page redrawn, with int8 per
    // channel (4096 groups) and NVFP4 (a million blocks, each a row of the clipping page). Printed, not
    // asserted (the machine is shared); bench/RESULTS.md's redraw figures come from here.
    void redrawTimeOfALargeTensor() {
        const QString file = path("large.safetensors");
        writeSafetensors(file.toStdString(), {{"large.weight", wave({4096, 4096}, 0.5)}});
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(file));
        QVERIFY(w.selectTensor(QStringLiteral("large.weight")));
        for (const bool nvfp4 : {false, true}) { // the window's default spec, then the NVFP4 preset
            if (nvfp4) chooseData(w.config()->presetBox(), static_cast<int>(Preset::NVFP4));
            QSignalSpy shown(w.tensorView(), &TensorView::shown);
            QElapsedTimer clock;
            clock.start();
            w.quantizeSelected();
            QVERIFY2(shown.wait(120000), qPrintable(w.errorText()));
            const qint64 jobAndPages = clock.elapsed();
            clock.restart();
            for (int t = 0; t < w.tabs()->count(); ++t) { // every tab drawn once
                w.tabs()->setCurrentIndex(t);
                w.tabs()->currentWidget()->repaint();
            }
            w.repaint();
            qInfo("4096x4096 f32, %s: job and result pages %lld ms, drawing every tab %lld ms",
                  nvfp4 ? "nvfp4" : "int8 per-channel", static_cast<long long>(jobAndPages),
                  static_cast<long long>(clock.elapsed()));
            QVERIFY(w.tensorView()->outcome() &&
                    w.tensorView()->outcome()->a.report.analysis.stats.count() == 4096LL * 4096);
            QCOMPARE(w.tensorView()->outcome()->a.report.analysis.clipping.groups().size(),
                     nvfp4 ? std::size_t{4096 * 4096 / 16} : std::size_t{4096});
        }
    }

    // Real models one after another (the sample's safetensors, a GGUF written by ggml, an HDF5 of
    // our own): nothing of the last model stays — filter, plots, headline, tables, plan, diff.
    void severalModelsInARow() {
        const QString sample =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        const QString gguf = QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/types_4x256.gguf");
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QString lastTensor;
        for (const QString& file : {sample, gguf, m_file}) {
            QVERIFY2(w.openFile(file), qPrintable(w.errorText()));
            const auto listed = static_cast<int>(w.source()->tensors().size());
            // Fresh state: no filter, every tensor listed, no result or table of the model before.
            QVERIFY(w.browser()->filterEdit()->text().isEmpty());
            QVERIFY(w.browser()->model()->rowCount() > 0);
            QCOMPARE(w.headline()->sqnrText(), QStringLiteral("—"));
            QCOMPARE(w.modelTable()->model()->rowCount(), 0);
            QVERIFY2(w.modelTable()->summaryText().contains(QFileInfo(file).fileName()),
                     qPrintable(w.modelTable()->summaryText())); // what fills it, not "0 quantized"
            QCOMPARE(w.tensorView()->outcome(), nullptr);
            for (QCustomPlot* plot : w.findChildren<QCustomPlot*>())
                if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0)))
                    QVERIFY2(lastTensor.isEmpty() || !t->text().contains(lastTensor), qPrintable(t->text()));
            QVERIFY(w.windowTitle().contains(QFileInfo(file).fileName()));
            // Use it as a person would: filter, run one tensor, then the whole model.
            const std::string tensor = w.browser()->firstTensorOfRank(2);
            QVERIFY(!tensor.empty());
            lastTensor = QString::fromStdString(tensor);
            QTest::keyClicks(w.browser()->filterEdit(), lastTensor.right(6));
            QVERIFY(w.selectTensor(lastTensor));
            QSignalSpy shown(w.tensorView(), &TensorView::shown);
            w.quantizeSelected();
            QVERIFY2(shown.wait(60000), qPrintable(w.errorText()));
            QVERIFY(w.headline()->sqnrText() != QStringLiteral("—"));
            QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
            w.quantizeAll();
            QVERIFY2(model.wait(120000), qPrintable(w.errorText()));
            QCOMPARE(w.modelTable()->model()->rowCount(), listed);
            QVERIFY2(w.modelTable()->summaryText().contains(QStringLiteral("quantized")),
                     qPrintable(w.modelTable()->summaryText()));
        }
    }

    // A file holding datasets the app cannot read says which and why as it opens, where the list
    // alone would leave them out silently; their names are shown escaped, as plain text.
    void openingSaysWhatIsNotListed() {
#if !QUANTLENS_HAVE_HDF5
        QSKIP("built without HDF5");
#else
        using namespace qltest;
        if (!pythonHas(QStringLiteral("h5py, numpy"))) QSKIP("python3 with h5py is not available");
        const QString h5 = path("h5py.h5");
        QString err;
        runPython({pythonScript("io_hdf5.py"), QStringLiteral("make"), h5, path("h5py.json")}, &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        MainWindow w;
        QVERIFY2(w.openFile(h5), qPrintable(w.errorText()));
        const std::vector<UnlistedEntry>& left = w.source()->unlisted();
        QVERIFY(left.size() > 3);
        const QString message = w.messageText();
        const QString first = QString::fromStdString(printable(left[0].name) + " (" + left[0].reason + ")");
        QVERIFY2(message.contains(QStringLiteral("\nNot listed: ") + first), qPrintable(message));
        QVERIFY2(message.endsWith(
                     QStringLiteral("and %1 more (quantlens-cli inspect lists them)").arg(left.size() - 3)),
                 qPrintable(message));
        QVERIFY(w.errorText().isEmpty());
        // A whole-model export says the same of them as the CLI's quantize --all: not in it.
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY2(model.wait(120000), qPrintable(w.errorText()));
        QSignalSpy exported(&w, &MainWindow::jobEnded);
        QVERIFY2(w.exportWeights(path("h5py-quantized.h5")), qPrintable(w.errorText()));
        QVERIFY2(exported.wait(120000) && w.errorText().isEmpty(), qPrintable(w.errorText()));
        QVERIFY2(
            w.messageText().endsWith(QStringLiteral(" %1 tensor(s) in the file are not read, so not in it "
                                                    "(quantlens-cli inspect lists them).")
                                         .arg(left.size())),
            qPrintable(w.messageText()));
#endif
    }

    // A narrow window never cuts the configuration's controls off out of reach: the panel keeps its
    // minimum width, and where its dock is narrower a sideways scroll bar reaches the rest.
    void narrowWindowKeepsTheControlsReachable() {
        MainWindow w;
        w.resize(760, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY2(w.openFile(m_file), qPrintable(w.errorText()));
        ConfigPanel* panel = w.findChild<ConfigPanel*>();
        QVERIFY(panel);
        // The docks take their widths a turn after the window is shown.
        QTRY_VERIFY_WITH_TIMEOUT(panel->width() >= panel->minimumSizeHint().width(), 5000);
        auto* scroll = qobject_cast<QScrollArea*>(panel->parentWidget()->parentWidget());
        QVERIFY(scroll);
        QVERIFY(panel->width() >= panel->minimumSizeHint().width());
        const int hidden = panel->width() - scroll->viewport()->width();
        if (hidden > 0) {
            QVERIFY(scroll->horizontalScrollBar()->isVisible());
            QCOMPARE(scroll->horizontalScrollBar()->maximum(), hidden);
        }
        // The boxes may shrink to a few characters, so the panel's minimum stays a dock's width.
        QVERIFY2(panel->minimumSizeHint().width() <= 300,
                 qPrintable(QString::number(panel->minimumSizeHint().width())));
    }

    void malformedFileShowsMessage() {
        MainWindow w;
        const QString bad = path("bad.safetensors");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("\xff\xff\xff\xff\xff\xff\xff\x7fnot a header");
        f.close();
        QVERIFY(!w.openFile(bad));
        QVERIFY2(w.errorText().contains(QStringLiteral("bad.safetensors")), qPrintable(w.errorText()));
        QVERIFY(!w.openFile(path("missing.safetensors")));
        QVERIFY(w.errorText().contains(QStringLiteral("missing.safetensors")));
        QCOMPARE(w.source(), nullptr);
    }

    void selectChangeSchemeAndDtypeRun() {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        ConfigPanel* c = w.config();
        chooseData(c->presetBox(), static_cast<int>(Preset::Custom)); // torch has no int4
        chooseData(c->schemeBox(), static_cast<int>(Scheme::PerGroup));
        QCOMPARE(c->axisBox()->currentData().toInt(), 1); // groups run along the last axis
        c->groupSizeBox()->setValue(32);
        chooseData(c->targetBox(), static_cast<int>(Target::Int4));
        QVERIFY2(c->plan().has_value(), qPrintable(c->problem()));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        QTest::keyClick(&w, Qt::Key_R, Qt::ControlModifier); // Run ▸ Quantize selected
        QVERIFY(shown.wait(30000));

        const auto o = w.tensorView()->outcome();
        QVERIFY(o);
        QCOMPARE(o->a.report.name, std::string("layers.0.mlp.weight"));
        QCOMPARE(o->a.report.plan.spec.target, Target::Int4);
        QCOMPARE(o->a.report.plan.scaleCount, std::int64_t(64 * 128 / 32));
        QVERIFY(w.headline()->sqnrText().contains(QStringLiteral("dB")));
        // Clipping page: one bar per group; SQNR page: one point per group.
        const auto& clipping = w.pages()[2]->plots();
        QCOMPARE(clipping.size(), std::size_t(2));
        auto* bars = qobject_cast<QCPBars*>(clipping[0]->plottable(0));
        QVERIFY(bars);
        QCOMPARE(bars->data()->size(), 64 * 128 / 32);
        QCOMPARE(clipping[1]->graph(0)->data()->size(), 64 * 128 / 32);
        // Value page: the 16 int4 levels drawn as the grid.
        auto* values = static_cast<ValueHistogramPage*>(w.pages()[0]);
        QCOMPARE(values->gridLineCount(), 16);
        QVERIFY(values->plots()[0]->graph(0)->data()->size() > 100);
        // Error page: a histogram whose counts sum to the element count.
        double sum = 0;
        auto* err = w.pages()[1]->plots()[0]->graph(0);
        for (int i = 0; i + 1 < err->data()->size(); ++i)
            sum += std::isnan(err->data()->at(i)->value) ? 0 : err->data()->at(i)->value;
        QCOMPARE(sum, 64.0 * 128.0);
    }

    // Ragged groups (npu_group_quant's group_index): typed as cumulative ends, checked by the plan
    // as they are typed, and run like any other scheme.
    void raggedGroupsFromTheirEnds() {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight"))); // [64, 128]
        ConfigPanel* c = w.config();
        chooseData(c->presetBox(), static_cast<int>(Preset::NpuGroupQuant));
        QVERIFY(!c->groupEndsEdit()->isEnabled());
        chooseData(c->schemeBox(), static_cast<int>(Scheme::Ragged));
        QVERIFY(c->groupEndsEdit()->isEnabled());
        QCOMPARE(c->groupEndsEdit()->text(), QStringLiteral("32,64")); // a starting point: two halves
        QVERIFY2(c->plan().has_value(), qPrintable(c->problem()));

        c->groupEndsEdit()->setText(QStringLiteral("10,70"));
        emit c->groupEndsEdit()->editingFinished();
        QVERIFY(!c->plan());
        QVERIFY2(c->problem().contains(QStringLiteral("70")), qPrintable(c->problem()));

        c->groupEndsEdit()->setText(QStringLiteral("10, 50, 64"));
        emit c->groupEndsEdit()->editingFinished();
        QVERIFY2(c->plan().has_value(), qPrintable(c->problem()));
        QCOMPARE(c->spec().groupEnds, (std::vector<std::int64_t>{10, 50, 64}));
        QCOMPARE(c->plan()->scaleShape.front(), std::int64_t(3));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY(shown.wait(30000));
        QCOMPARE(w.tensorView()->outcome()->a.report.plan.spec.groupEnds,
                 (std::vector<std::int64_t>{10, 50, 64}));
    }

    // Calibration "file": the operator's own scales from a tensor file, used as given by both sides
    // of a preset comparison (re-expressed for B's convention), codes as the reference makes them.
    void scalesFromAFile() {
        const QString scaleFile = path("scales.safetensors");
        std::vector<float> scales(64);
        for (std::size_t i = 0; i < scales.size(); ++i)
            scales[i] = 0.004f + 0.0001f * static_cast<float>(i);
        writeSafetensors(scaleFile.toStdString(), {{"mlp.scale", Tensor::fromFloats({64}, scales)}});
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        ConfigPanel* c = w.config();
        QVERIFY(!c->scaleRefEdit()->isEnabled());
        chooseData(c->calibrationBox(), static_cast<int>(CalibMethod::Explicit));
        QVERIFY(c->scaleRefEdit()->isEnabled());
        QVERIFY2(c->problem().contains(QStringLiteral("FILE:TENSOR")), qPrintable(c->problem()));

        c->setParamFiles({scaleFile.toStdString() + ":mlp.scale", {}});
        QVERIFY2(c->problem().isEmpty(), qPrintable(c->problem()));
        chooseData(c->compareBox(), QStringLiteral("preset:ascend-quant"));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY2(shown.wait(30000), qPrintable(w.errorText()));
        const auto o = w.tensorView()->outcome();
        QVERIFY(o && o->b);
        QCOMPARE(o->a.report.params.scales, scales);
        const ResolvedSpec plan = resolveSpec(c->spec(), {64, 128});
        QuantParams given;
        given.scales = scales;
        QCOMPARE(o->a.codes,
                 quantizeReference(
                     plan, given,
                     openTensorSource(m_file.toStdString())->load("layers.0.mlp.weight").toFloatVector()));
        // ascend-quant multiplies: the same steps arrive there as their inverses.
        QCOMPARE(o->b->report.params.scales.front(), 1.0f / scales.front());

        c->setParamFiles({scaleFile.toStdString() + ":no.such", {}});
        w.quantizeSelected();
        QTRY_VERIFY(w.errorText().contains(QStringLiteral("no.such")));
    }

    // Preset B is planned with A: a comparison B cannot run is said before any work, not after.
    void presetBIsValidated() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        QVERIFY2(w.config()->problem().isEmpty(),
                 qPrintable(w.config()->problem()));                          // torch int8 per-channel
        chooseData(w.config()->compareBox(), QStringLiteral("preset:nvfp4")); // nvfp4 has no int8
        QVERIFY(w.config()->plan());                                          // A alone is fine
        QVERIFY2(w.config()->problem().contains(QStringLiteral("Preset B (nvfp4)")),
                 qPrintable(w.config()->problem()));
        QCOMPARE(w.config()->statusLabel()->text(), w.config()->problem());
        QSignalSpy busy(w.runner(), &JobRunner::busyChanged);
        w.quantizeSelected();
        QVERIFY(w.errorText().contains(QStringLiteral("Preset B (nvfp4)")));
        QCOMPARE(busy.count(), 0);
        chooseData(w.config()->compareBox(), QStringLiteral("preset:tensorrt"));
        QVERIFY2(w.config()->problem().isEmpty(), qPrintable(w.config()->problem()));
    }

    // A result shown after a setting changed says it is out of date, and is current again when the
    // setting goes back.
    void staleResultsAreMarked() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY2(shown.wait(30000), qPrintable(w.errorText()));
        QVERIFY(!w.headline()->isStale());
        chooseData(w.config()->targetBox(), static_cast<int>(Target::UInt8));
        QVERIFY(w.headline()->isStale());
        chooseData(w.config()->targetBox(), static_cast<int>(Target::Int8));
        QVERIFY(!w.headline()->isStale());
        chooseData(w.config()->compareBox(), QStringLiteral("preset:tensorrt"));
        QVERIFY(w.headline()->isStale());
        w.quantizeSelected();
        QVERIFY2(shown.wait(30000), qPrintable(w.errorText()));
        QVERIFY(!w.headline()->isStale());
    }

    void invalidComboExplainsItself() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        chooseData(w.config()->presetBox(), static_cast<int>(Preset::MX));
        chooseData(w.config()->targetBox(), static_cast<int>(Target::UInt8));
        QVERIFY(!w.config()->plan());
        QVERIFY(!w.config()->problem().isEmpty());
        QCOMPARE(w.config()->statusLabel()->text(), w.config()->problem());
        QSignalSpy busy(w.runner(), &JobRunner::busyChanged);
        w.quantizeSelected();
        QVERIFY(w.errorText().contains(w.config()->problem()));
        QCOMPARE(busy.count(), 0); // nothing started
    }

    void compareTwoPresets() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.1.attn.weight")));
        chooseData(w.config()->compareBox(), QStringLiteral("preset:tensorrt"));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY(shown.wait(30000));
        const auto o = w.tensorView()->outcome();
        QVERIFY(o->b && o->comparison);
        QCOMPARE(o->comparison->labelA, std::string("torch"));
        QCOMPARE(o->comparison->labelB, std::string("tensorrt"));
        QCOMPARE(o->comparison->count, std::int64_t(32 * 96));
        PlotPage* cmp = w.pages()[4];
        QVERIFY(cmp->note()->text().contains(QStringLiteral("tensorrt")));
        QCOMPARE(cmp->plots()[0]->plottableCount(), 2); // same code, different code
        QCOMPARE(cmp->plots()[1]->plottableCount(), o->comparison->mismatched > 0 ? 1 : 0); // the map
        // Timing has a bar set per side.
        QCOMPARE(w.pages()[3]->plots()[0]->plottableCount(), 2);
    }

    void quantizeAllFillsTableAndOpensRow() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY2(model.wait(30000), qPrintable(w.errorText()));
        ModelTableModel* table = w.modelTable()->model();
        QCOMPARE(table->rowCount(), 3);
        // The two weights worst first (SQNR ascending), then the bias, kept (weights only, as the CLI).
        QVERIFY(table->rows()[0].kept.empty() && table->rows()[1].kept.empty());
        QVERIFY(table->rows()[0].sqnrDb <= table->rows()[1].sqnrDb);
        QCOMPARE(table->rows()[2].name, std::string("layers.0.mlp.bias"));
        QVERIFY2(table->rows()[2].kept.find("not a weight") != std::string::npos,
                 table->rows()[2].kept.c_str());
        QTableView* view = w.modelTable()->view();
        const QModelIndex first = table->index(0, 0);
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        emit view->doubleClicked(first); // what a double-click delivers
        QVERIFY2(shown.wait(30000), qPrintable(w.errorText()));
        QCOMPARE(w.tensorView()->outcome()->a.report.name, table->rows()[0].name);
        QCOMPARE(w.browser()->selectedTensor(), table->rows()[0].name);
    }

    // Choosing a block format steers the scheme, axis and target to what it takes: no invalid
    // combination on the way.
    void choosingBlockFormatSteersToValidSpec() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        ConfigPanel* c = w.config();
        for (Preset p : {Preset::MX, Preset::NVFP4}) {
            chooseData(c->presetBox(), static_cast<int>(p));
            QVERIFY2(c->plan().has_value(), qPrintable(c->problem()));
            QCOMPARE(c->spec().scheme, Scheme::Block);
            QCOMPARE(c->spec().target, p == Preset::MX ? Target::Fp8E4M3 : Target::Fp4E2M1);
            // The block field shows the format's own block, not the last custom one.
            const std::int64_t block = presetInfo(p).formatBlock;
            QCOMPARE(c->spec().block, std::vector<std::int64_t>{block});
            QVERIFY(describe(c->spec()).find("block(" + std::to_string(block) + ")") != std::string::npos);
        }
    }

    // The GUI's Quantize all and `quantlens-cli quantize --all` run the same core/job: on the bundled
    // model their reports are the same, timings aside.
    void wholeModelReportMatchesCli() {
        const QString sample =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        MainWindow w;
        QVERIFY(w.openFile(sample));
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY2(model.wait(60000), qPrintable(w.errorText()));
        // The table's image holds every row, not the part scrolled into view.
        w.tabs()->setCurrentWidget(w.modelTable());
        QVERIFY2(w.exportPlot(path("table.png")), qPrintable(w.errorText()));
        const int rows = w.modelTable()->model()->rowCount();
        QVERIFY(QImage(path("table.png")).height() >=
                rows * w.modelTable()->view()->verticalHeader()->defaultSectionSize());
        const QString guiReport = path("gui-report.json"), cliReport = path("cli-report.json");
        QVERIFY2(w.exportReport(guiReport), qPrintable(w.errorText()));
        QProcess cli;
        cli.start(QStringLiteral(QUANTLENS_CLI),
                  {QStringLiteral("quantize"), sample, QStringLiteral("--all"), QStringLiteral("-q"),
                   QStringLiteral("--report"), cliReport});
        QVERIFY(cli.waitForFinished(60000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        auto load = [](const QString& file) {
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly)) return nlohmann::json();
            const QByteArray bytes = f.readAll();
            nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
            for (auto& t : j["tensors"])
                t.erase("timing");
            return j;
        };
        const nlohmann::json gui = load(guiReport), cli2 = load(cliReport);
        QVERIFY(gui["tensors"].size() > 10);
        QVERIFY(gui == cli2);
    }

    // Quantize all gives each tensor its role's axis (as the CLI without --axis), never one left by
    // another tensor or model: NVFP4 on a conv model ([O, I, 1, 1]: blocks along the input channels,
    // not the 1-element last axis), then on a Linear model, each run equal to the CLI's; the axis each
    // tensor used is in its row's tooltip. An axis the user picks applies to every tensor.
    void quantizeAllTakesEachTensorsRoleAxis() {
        const QString conv =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        const QString linear =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/tiny_llama.safetensors");
        MainWindow w;
        auto run = [&](const QString& model, const QStringList& cliArgs, const QString& name) {
            QSignalSpy shown(w.modelTable(), &ModelTablePage::shown);
            w.quantizeAll();
            if (!shown.wait(60000)) return nlohmann::json();
            const QString gui = path(qPrintable(name + QStringLiteral("-gui.json")));
            const QString cli = path(qPrintable(name + QStringLiteral("-cli.json")));
            if (!w.exportReport(gui)) return nlohmann::json();
            QProcess p;
            p.start(QStringLiteral(QUANTLENS_CLI),
                    QStringList{QStringLiteral("quantize"), model, QStringLiteral("--all"),
                                QStringLiteral("-q"), QStringLiteral("--preset"), QStringLiteral("nvfp4"),
                                QStringLiteral("--report"), cli} +
                        cliArgs);
            if (!p.waitForFinished(60000) || p.exitCode() != 0) return nlohmann::json();
            auto load = [](const QString& file) {
                QFile f(file);
                if (!f.open(QIODevice::ReadOnly)) return nlohmann::json();
                const QByteArray bytes = f.readAll();
                nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
                for (auto& t : j["tensors"]) {
                    t.erase("timing");
                    // NVFP4 fixes its own block of 16: the panel's spec echoes it, the CLI's leaves it out.
                    if (t.contains("spec")) t["spec"].erase("block");
                }
                return j;
            };
            nlohmann::json a = load(gui);
            const nlohmann::json b = load(cli);
            if (a == b) return a;
            for (std::size_t i = 0; i < std::min(a["tensors"].size(), b["tensors"].size()); ++i)
                if (a["tensors"][i] != b["tensors"][i]) {
                    for (const auto& [key, value] : a["tensors"][i].items())
                        if (b["tensors"][i].value(key, nlohmann::json()) != value)
                            qWarning(
                                "%s: %s: app %s, cli %s",
                                a["tensors"][i].value("name", std::string()).c_str(), key.c_str(),
                                value.dump().substr(0, 300).c_str(),
                                b["tensors"][i].value(key, nlohmann::json()).dump().substr(0, 300).c_str());
                    break;
                }
            return nlohmann::json();
        };
        auto quantized = [](const nlohmann::json& report) {
            std::map<std::string, std::vector<int>> axes; // name: the axes it ran along
            for (const auto& t : report["tensors"])
                if (!t.contains("passed_through") && !t.contains("error"))
                    axes[t["name"].get<std::string>()] = t["spec"]["axes"].get<std::vector<int>>();
            return axes;
        };
        auto tooltipOf = [&](const std::string& name) {
            const auto* m = w.modelTable()->model();
            for (int row = 0; row < m->rowCount(); ++row)
                if (m->index(row, 0).data(ModelTableModel::TensorNameRole).toString() ==
                    QString::fromStdString(name))
                    return m->index(row, 0).data(Qt::ToolTipRole).toString();
            return QString();
        };

        QVERIFY(w.openFile(conv));
        chooseData(w.config()->presetBox(), static_cast<int>(Preset::NVFP4));
        const nlohmann::json convReport = run(conv, {}, QStringLiteral("conv"));
        QVERIFY2(!convReport.is_null(), "the app's conv run differs from the CLI's");
        const auto convAxes = quantized(convReport);
        QVERIFY2(!convAxes.empty(), qPrintable(w.modelTable()->summaryText()));
        for (const auto& [name, axes] : convAxes) {
            QVERIFY(!axes.empty());
            QCOMPARE(axes.front(), 1); // the input channels, whatever the panel's axis was
            QStringList expected;
            for (int a : axes)
                expected << QString::number(a);
            const QString tip = tooltipOf(name);
            QVERIFY2(tip.contains(QStringLiteral("scales along axis ") + expected.join(QLatin1Char(','))),
                     qPrintable(tip));
        }

        QVERIFY(w.openFile(linear));
        chooseData(w.config()->presetBox(), static_cast<int>(Preset::NVFP4));
        const nlohmann::json linearReport = run(linear, {}, QStringLiteral("linear"));
        QVERIFY2(!linearReport.is_null(), "the app's Linear run differs from the CLI's");
        const auto linearAxes = quantized(linearReport);
        // Every 2-D weight: the projections, the embedding and lm_head (the norms are kept).
        QCOMPARE(linearAxes.size(), std::size_t{9});
        for (const auto& [name, axes] : linearAxes)
            QCOMPARE(axes, std::vector<int>{1}); // a Linear's [out, in]: along its input features
        QVERIFY(w.modelTable()->summaryText().startsWith(QStringLiteral("9 tensor(s) quantized")));

        // An axis the user picks: every tensor along it, as quantlens-cli --axis.
        ConfigPanel* c = w.config();
        QVERIFY(!c->axisChosen()); // a new model forgets the pick
        c->axisBox()->setCurrentIndex(0);
        c->setAxisChosen(true);
        const nlohmann::json picked =
            run(linear, {QStringLiteral("--axis"), QStringLiteral("0")}, QStringLiteral("picked"));
        QVERIFY2(!picked.is_null(), "the app's run along a picked axis differs from the CLI's");
        const auto pickedAxes = quantized(picked);
        QCOMPARE(pickedAxes.size(), std::size_t{9});
        for (const auto& [name, axes] : pickedAxes)
            QCOMPARE(axes, std::vector<int>{0});
        QVERIFY(w.openFile(conv));
        QVERIFY(!c->axisChosen());
    }

    // A report merged from shards opens as a whole-model run shows: the table, then each tensor's
    // plots drawn from the report alone, equal to what was written.
    void opensMergedReport() {
        const QString sample =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        auto cli = [&](const QStringList& args) {
            QProcess p;
            p.setWorkingDirectory(m_dir.path());
            p.start(QStringLiteral(QUANTLENS_CLI), args);
            return p.waitForFinished(60000) && p.exitCode() == 0;
        };
        for (const char* shard : {"0/2", "1/2"})
            QVERIFY(cli({QStringLiteral("quantize"), sample, QStringLiteral("--all"), QStringLiteral("-q"),
                         QStringLiteral("--shard"), QLatin1String(shard), QStringLiteral("--report"),
                         QStringLiteral("part-%1.json").arg(QLatin1Char(shard[0]))}));
        QVERIFY(cli({QStringLiteral("merge"), QStringLiteral("part-0.json"), QStringLiteral("part-1.json"),
                     QStringLiteral("-o"), QStringLiteral("merged.json"), QStringLiteral("-q")}));
        QFile f(path("merged.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        const nlohmann::json merged = nlohmann::json::parse(bytes.begin(), bytes.end());

        MainWindow w;
        QVERIFY(w.openFile(sample)); // a model open before stays open
        QVERIFY2(w.openFile(path("merged.json")), qPrintable(w.errorText()));
        QCOMPARE(w.modelTable()->model()->rowCount(), static_cast<int>(merged["tensors"].size()));
        QVERIFY(w.source());
        int shown = 0;
        for (const auto& entry : merged["tensors"]) {
            if (!entry.contains("stats") || ++shown > 3) continue;
            QSignalSpy result(w.tensorView(), &TensorView::shown);
            emit w.modelTable()->tensorActivated(QString::fromStdString(entry["name"].get<std::string>()));
            QCOMPARE(result.count(), 1);
            QVERIFY(w.tensorView()->outcome());
            QCOMPARE(toJson(w.tensorView()->outcome()->a.report).dump(1), entry.dump(1));
        }
        QCOMPARE(shown > 3, true);
        QFile other(path("other.json"));
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write("{\"weight_map\": {}}");
        other.close();
        QVERIFY(!w.openFile(path("other.json"))); // not a report: refused with the reason, the table stays
        QVERIFY(w.errorText().contains(QStringLiteral("not a QuantLens report")));
        QCOMPARE(w.modelTable()->model()->rowCount(), static_cast<int>(merged["tensors"].size()));
    }

    void cancelLongRun() {
        MainWindow w;
        w.show(); // shortcuts reach only a visible window
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(m_bigFile));
        chooseData(w.config()->backendBox(), QStringLiteral("cpu"));
        QuantSpec spec = w.config()->spec();
        spec.calibration.method = CalibMethod::Mse;
        w.config()->setSpec(spec);
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY(w.runner()->isBusy());
        JobHandle* job = w.runner()->current();
        QVERIFY(job);
        QSignalSpy progress(job, &JobHandle::progress);
        QSignalSpy cancelled(job, &JobHandle::cancelled);
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 2, 30000); // it works, and the GUI thread is free
        QTest::keyClick(&w, Qt::Key_Escape);
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!w.runner()->isBusy());
        // The worker stops within a chunk: once it has, whatever it handed back has been queued, and
        // delivering the queue must land nothing.
        QTRY_COMPARE_WITH_TIMEOUT(QThreadPool::globalInstance()->activeThreadCount(), 0, 30000);
        QCoreApplication::sendPostedEvents();
        QCOMPARE(model.count(), 0);
        QCOMPARE(w.modelTable()->model()->rowCount(), 0);
    }

    void staleResultsNeverLand() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        w.quantizeSelected();
        QVERIFY(w.selectTensor(QStringLiteral("layers.1.attn.weight")));
        w.quantizeSelected(); // supersedes the first
        QVERIFY(shown.wait(30000));
        QTest::qWait(500);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(w.tensorView()->outcome()->a.report.name, std::string("layers.1.attn.weight"));
    }

    void exportsAndSession() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(!w.exportReport(path("early.json"))); // nothing run yet: a message, no file
        QVERIFY(!QFile::exists(path("early.json")));
        QVERIFY(w.selectTensor(QStringLiteral("layers.0.mlp.weight")));
        chooseData(w.config()->targetBox(), static_cast<int>(Target::Fp8E4M3));
        chooseData(w.config()->presetBox(), static_cast<int>(Preset::TensorRT));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY2(shown.wait(30000), qPrintable(w.errorText()));

        QVERIFY(w.exportReport(path("report.json")));
        QFile report(path("report.json"));
        QVERIFY(report.open(QIODevice::ReadOnly));
        QVERIFY(report.readAll().contains("layers.0.mlp.weight"));
        QVERIFY(w.exportReport(path("report.csv")));
        QVERIFY(w.exportPlot(path("plot.png")));
        QVERIFY(w.exportPlot(path("plot.pdf")));
        QVERIFY(QFileInfo(path("plot.png")).size() > 1000);
        QVERIFY(w.exportPlot(path("plot.svg")));
        QFile svg(path("plot.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray svgText = svg.readAll();
        QVERIFY(svgText.contains("<svg") && svgText.contains("<path")); // vector paths, not one bitmap
        QVERIFY(!w.exportWeights(path("quantized.safetensors")));       // beside the model: refused
        QVERIFY2(w.errorText().contains(QStringLiteral("own folder")), qPrintable(w.errorText()));
        QVERIFY(!QFile::exists(path("quantized.safetensors")) && !QFile::exists(path("config.json")));
        QVERIFY(QDir().mkpath(path("export")));
        QSignalSpy exported(&w, &MainWindow::jobEnded);
        QVERIFY(w.exportWeights(path("export/quantized.safetensors")));
        QVERIFY2(exported.wait(60000) && w.errorText().isEmpty(), qPrintable(w.errorText()));
        const auto out = openTensorSource(path("export/quantized.safetensors").toStdString());
        QVERIFY(out->find("layers.0.mlp.weight"));
        QVERIFY(out->find("layers.0.mlp.weight_scale"));
        QVERIFY(!w.exportWeights(m_file)); // never over the input
        QVERIFY(!w.errorText().isEmpty());

        chooseData(w.config()->calibrationBox(), static_cast<int>(CalibMethod::Explicit));
        w.config()->setParamFiles({"scales.safetensors:layers.0.mlp.weight_scale", {}});
        QVERIFY(w.saveSessionTo(path("s.json")));
        MainWindow restored;
        QVERIFY(restored.loadSessionFrom(path("s.json")));
        QCOMPARE(restored.browser()->selectedTensor(), std::string("layers.0.mlp.weight"));
        QCOMPARE(restored.config()->spec(), w.config()->spec());
        QCOMPARE(restored.config()->paramFiles().scales,
                 w.config()->paramFiles().scales);  // the scale file too
        QVERIFY(!restored.loadSessionFrom(m_file)); // not a session: a message
        QVERIFY(restored.errorText().contains(QStringLiteral("session")));
    }
};

QTEST_MAIN(TestGuiWindow)
#include "tst_gui_window.moc"
