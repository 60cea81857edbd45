// The app's exports follow the rules the CLI's do: what a compressed-tensors export cannot
// store is decided during the run, so the window's table, its report and the export agree; and no
// file the app writes may replace any input of the run (the model, the importance or scale file).
#include "file_dialog_answer.h"
#include "gui/main_window.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "widgets/config_panel.h"
#include "widgets/job_runner.h"
#include "widgets/model_table_page.h"
#include "widgets/tensor_view.h"
#include "widgets/weights_export.h"
#include "widgets/workbench.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <filesystem>
#include <set>

using namespace ql;
using namespace qltest;

namespace {

Tensor wave(const Shape& shape, double phase, bool positive = false) {
    std::vector<float> v(static_cast<std::size_t>(elementCount(shape)));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + phase) * (1.0 + 0.01 * (i % 7)));
    if (positive)
        for (float& x : v)
            x = std::fabs(x) + 0.01f;
    return Tensor::fromFloats(shape, v);
}

} // namespace

class TestGuiExport : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_file;

    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }

    // Waits for the job the last action started; true when it ended without an error.
    static bool waitJob(MainWindow& w, QSignalSpy& ended) {
        if (!ended.wait(120000)) return false;
        return ended.last().at(0).toString().isEmpty() && w.errorText().isEmpty();
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("model")));
        m_file = path("model/mixed.safetensors");
        // A bias and a 1-D norm weight: kept by default (not weights); with "Include biases and norms"
        // the spec quantizes them, but compressed-tensors cannot store them.
        writeSafetensors(m_file.toStdString(), {{"l0.mlp.weight", wave({16, 32}, 0.0)},
                                                {"l0.mlp.bias", wave({16}, 1.0)},
                                                {"l0.norm.weight", wave({32}, 2.0)},
                                                {"l1.attn.weight", wave({8, 32}, 3.0)}});
    }

    // By default a whole-model run quantizes weights only, as quantlens-cli quantize --all: the bias and
    // the norm vector are kept and listed with the reason.
    void wholeModelRunKeepsBiasesAndNorms() {
        MainWindow w;
        QVERIFY2(w.openFile(m_file), qPrintable(w.errorText()));
        QVERIFY(!w.workbench()->config()->includeNonWeightsBox()->isChecked());
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY2(model.wait(120000), qPrintable(w.errorText()));
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("out")));
        QVERIFY(w.exportReport(path("out/weights-only.json")));
        const auto report =
            parseJson(QByteArray::fromStdString(readFile(path("out/weights-only.json").toStdString())));
        std::set<std::string> quantized, kept;
        for (const auto& t : report["tensors"]) {
            QVERIFY2(!t.contains("error"), t.dump().c_str());
            if (!t.contains("passed_through")) {
                quantized.insert(t["name"].get<std::string>());
                continue;
            }
            kept.insert(t["name"].get<std::string>());
            QVERIFY2(t["passed_through"].get<std::string>().find("not a weight") != std::string::npos,
                     t.dump().c_str());
        }
        QCOMPARE(quantized, (std::set<std::string>{"l0.mlp.weight", "l1.attn.weight"}));
        QCOMPARE(kept, (std::set<std::string>{"l0.mlp.bias", "l0.norm.weight"}));
        QVERIFY2(w.modelTable()->summaryText().contains(QStringLiteral("2 tensor(s) quantized; 2 kept")),
                 qPrintable(w.modelTable()->summaryText()));
        // Their export keeps them the same way.
        QSignalSpy ended(&w, &MainWindow::jobEnded);
        QVERIFY2(w.exportWeights(path("out/weights-only.safetensors")), qPrintable(w.errorText()));
        QVERIFY2(waitJob(w, ended), qPrintable(w.errorText()));
        QVERIFY2(
            w.messageText().contains(QStringLiteral("Wrote 2 quantized tensor(s) and 2 kept unquantized")),
            qPrintable(w.messageText()));
    }

    // With "Include biases and norms", a whole-model run whose export cannot store some quantized
    // tensors: the table before the export lists them quantized; the export's run keeps them
    // unquantized, and the table, the report written after it and the exported file all say the same,
    // tensor by tensor.
    void wholeModelReportAndExportAgree() {
        MainWindow w;
        QVERIFY2(w.openFile(m_file), qPrintable(w.errorText()));
        w.workbench()->config()->includeNonWeightsBox()->setChecked(true);
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY2(model.wait(120000), qPrintable(w.errorText()));
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("out")));
        QVERIFY(w.exportReport(path("out/before.json")));
        const auto before =
            parseJson(QByteArray::fromStdString(readFile(path("out/before.json").toStdString())));
        int quantizedBefore = 0;
        for (const auto& t : before["tensors"])
            quantizedBefore += !t.contains("passed_through") && !t.contains("error");
        QCOMPARE(quantizedBefore, 4); // biases and norms included: the default spec applies to all four

        QSignalSpy ended(&w, &MainWindow::jobEnded);
        QVERIFY2(w.exportWeights(path("out/q.safetensors")), qPrintable(w.errorText()));
        QVERIFY2(waitJob(w, ended), qPrintable(w.errorText()));
        QVERIFY2(
            w.messageText().contains(QStringLiteral("Wrote 2 quantized tensor(s) and 2 kept unquantized")),
            qPrintable(w.messageText()));
        QVERIFY(w.exportReport(path("out/r.json")));
        const auto report = parseJson(QByteArray::fromStdString(readFile(path("out/r.json").toStdString())));
        const auto out = openTensorSource(path("out/q.safetensors").toStdString());
        std::set<std::string> quantized, kept;
        for (const auto& t : report["tensors"]) {
            const std::string name = t["name"];
            QVERIFY2(!t.contains("error"), name.c_str());
            (t.contains("passed_through") ? kept : quantized).insert(name);
            // The export holds it: quantized ones with their scales, kept ones as they are.
            QVERIFY2(out->find(name), name.c_str());
            QCOMPARE(static_cast<bool>(out->find(name + "_scale")), !t.contains("passed_through"));
        }
        QCOMPARE(quantized, (std::set<std::string>{"l0.mlp.weight", "l1.attn.weight"}));
        QCOMPARE(kept, (std::set<std::string>{"l0.mlp.bias", "l0.norm.weight"}));
        for (const auto& t : report["tensors"]) // kept for the export's sake, and said so
            if (t.contains("passed_through"))
                QVERIFY2(t["passed_through"].template get<std::string>().find("compressed-tensors") !=
                             std::string::npos,
                         t.dump().c_str());
        // A kept tensor is exported as the model holds it.
        const auto model0 = openTensorSource(m_file.toStdString());
        QCOMPARE(toHex(out->load("l0.norm.weight")), toHex(model0->load("l0.norm.weight")));
#ifdef QUANTLENS_CLI
        // The CLI's run for the same export reports the same split.
        QProcess cli;
        cli.start(QStringLiteral(QUANTLENS_CLI),
                  {QStringLiteral("quantize"), m_file, QStringLiteral("--all"), QStringLiteral("-q"),
                   QStringLiteral("--include-non-weights"), QStringLiteral("--out"),
                   path("out/cli.safetensors"), QStringLiteral("--report"), path("out/cli.json")});
        QVERIFY(cli.waitForFinished(120000));
        QCOMPARE(cli.exitCode(), 0);
        const auto cliReport =
            parseJson(QByteArray::fromStdString(readFile(path("out/cli.json").toStdString())));
        QCOMPARE(cliReport["tensors"].size(), report["tensors"].size());
        for (std::size_t i = 0; i < report["tensors"].size(); ++i)
            QCOMPARE(cliReport["tensors"][i].value("passed_through", std::string()),
                     report["tensors"][i].value("passed_through", std::string()));
#endif
    }

    // The export dialog offers every layout of core's table (quantlens-cli quantize --export-layout):
    // ascend-quant's inverse scale has no compressed-tensors form, so that export says why and names
    // the native layout, which writes every quantized tensor as the operator produces it.
    void nativeLayoutFromTheDialog() {
        const QString filters = weightsExportFilters();
        QString nativeFilter;
        for (const QString& filter : filters.split(QStringLiteral(";;"))) {
            if (filter.contains(QStringLiteral("native"))) nativeFilter = filter;
        }
        for (const ExportLayoutInfo& l : exportLayouts()) {
            QVERIFY2(
                filters.contains(QString::fromLatin1(l.name.data(), static_cast<qsizetype>(l.name.size()))),
                qPrintable(filters));
        }
        QVERIFY(!nativeFilter.isEmpty());
        QCOMPARE(layoutOfFilter(nativeFilter), ExportLayout::Native);
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("native")));
        const qltest::FileDialogAnswer answer(nativeFilter, path("native/ascend"));
        const WeightsExportChoice chosen = askWeightsExport(nullptr);
        QVERIFY(answer.answered());
        QCOMPARE(chosen.layout, ExportLayout::Native);
        QCOMPARE(QFileInfo(chosen.path).fileName(), QStringLiteral("ascend.safetensors"));

        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QComboBox* preset = w.config()->presetBox();
        preset->setCurrentIndex(preset->findData(static_cast<int>(Preset::AscendQuant)));
        QCOMPARE(w.config()->spec().preset, Preset::AscendQuant);
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QVERIFY2(model.wait(120000), qPrintable(w.errorText()));
        QVERIFY2(w.modelTable()->summaryText().startsWith(QStringLiteral("2 tensor(s) quantized")),
                 qPrintable(w.modelTable()->summaryText()));
        QSignalSpy ended(&w, &MainWindow::jobEnded);
        QVERIFY(w.exportWeights(path("native/ct.safetensors")));
        QVERIFY(!waitJob(w, ended));
        QVERIFY2(w.errorText().contains(QStringLiteral("inverse step")), qPrintable(w.errorText()));
        QVERIFY2(w.errorText().contains(QStringLiteral("The native layout")), qPrintable(w.errorText()));
        QVERIFY(!QFile::exists(path("native/ct.safetensors")));
        QVERIFY(w.exportWeights(chosen.path, chosen.layout));
        QVERIFY2(waitJob(w, ended), qPrintable(w.errorText()));
        QVERIFY2(
            w.messageText().contains(QStringLiteral("Wrote 2 quantized tensor(s) and 2 kept unquantized")),
            qPrintable(w.messageText()));
        QVERIFY(
            !QFile::exists(path("native/config.json"))); // a native file is no compressed-tensors checkpoint
        const auto out = openTensorSource(chosen.path.toStdString());
        std::set<std::string> names;
        for (const auto& t : out->tensors())
            names.insert(t.name);
        QVERIFY2(names.count("l0.mlp.bias") && names.count("l0.norm.weight"),
                 "the kept tensors, as they are");
    }

    // One tensor asked for alone, which compressed-tensors cannot store, is refused with the reason.
    void oneTensorTheExportCannotStoreIsRefused() {
        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY(w.selectTensor(QStringLiteral("l0.mlp.bias")));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY2(shown.wait(60000), qPrintable(w.errorText()));
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("one")));
        QSignalSpy ended(&w, &MainWindow::jobEnded);
        QVERIFY(w.exportWeights(path("one/bias.safetensors")));
        QVERIFY(!waitJob(w, ended));
        QVERIFY2(w.errorText().contains(QStringLiteral("compressed-tensors")), qPrintable(w.errorText()));
        QVERIFY(!QFile::exists(path("one/bias.safetensors")));
    }

    // Every file the app writes is refused over any input, under any spelling: the model, the
    // importance file and the scale file; the inputs stay as they were.
    void refusesOutputsOverAnyInput() {
        const QString importance = path("importance.safetensors");
        writeSafetensors(importance.toStdString(), {{"l0.mlp.input_sq_mean", wave({32}, 0.5, true)},
                                                    {"l1.attn.input_sq_mean", wave({32}, 0.7, true)}});
        const QString scales = path("scales.safetensors");
        writeSafetensors(scales.toStdString(), {{"l0.mlp.weight_scale", wave({16, 1}, 0.1)}});
        const QString link = path("model-link.safetensors");
        QVERIFY(QFile::link(m_file, link));
        const QString spelled = m_dir.path() + QStringLiteral("/model/../importance.safetensors");
        const std::string modelBytes = readFile(m_file.toStdString());
        const std::string importanceBytes = readFile(importance.toStdString());
        const std::string scaleBytes = readFile(scales.toStdString());

        MainWindow w;
        QVERIFY(w.openFile(m_file));
        QVERIFY2(w.workbench()->openImportance(importance), qPrintable(w.errorText()));
        QVERIFY(w.selectTensor(QStringLiteral("l0.mlp.weight")));
        QSignalSpy shown(w.tensorView(), &TensorView::shown);
        w.quantizeSelected();
        QVERIFY2(shown.wait(60000), qPrintable(w.errorText()));

        QVERIFY(!w.exportWeights(importance));
        QVERIFY2(w.errorText().contains(QStringLiteral("the importance file")), qPrintable(w.errorText()));
        QVERIFY(!w.exportWeights(spelled));
        QVERIFY2(w.errorText().contains(QStringLiteral("the importance file")), qPrintable(w.errorText()));
        QVERIFY(!w.exportWeights(link));
        QVERIFY(!w.errorText().isEmpty());
        for (const QString& target : {importance, spelled, link, m_file}) {
            QVERIFY(!w.exportReport(target));
            QVERIFY2(w.errorText().contains(QStringLiteral("would write over")), qPrintable(w.errorText()));
            QVERIFY(!w.exportPlot(target));
            QVERIFY2(w.errorText().contains(QStringLiteral("would write over")), qPrintable(w.errorText()));
        }
        QComboBox* calibration = w.config()->calibrationBox();
        calibration->setCurrentIndex(calibration->findData(static_cast<int>(CalibMethod::Explicit)));
        QCOMPARE(calibration->currentData().toInt(), static_cast<int>(CalibMethod::Explicit));
        w.config()->setParamFiles({scales.toStdString(), {}});
        QVERIFY(!w.exportReport(scales));
        QVERIFY2(w.errorText().contains(QStringLiteral("the scale file")), qPrintable(w.errorText()));
        QVERIFY(!w.exportPlot(scales));
        QVERIFY2(w.errorText().contains(QStringLiteral("the scale file")), qPrintable(w.errorText()));

        QCOMPARE(readFile(m_file.toStdString()), modelBytes);
        QCOMPARE(readFile(importance.toStdString()), importanceBytes);
        QCOMPARE(readFile(scales.toStdString()), scaleBytes);
        // Elsewhere the same exports are written.
        QVERIFY2(w.exportReport(path("fine.json")), qPrintable(w.errorText()));
    }
};

QTEST_MAIN(TestGuiExport)
#include "tst_gui_export.moc"
