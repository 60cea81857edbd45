// The Diff tab in the real main window (offscreen): the open model against another checkpoint of
// it, pairs that cannot be compared listed first with their reason, the figures those of core's
// diffTensors, the report the CLI's `diff --report` writes, and no diff left over after another
// model is opened.
#include "cli_test_util.h"
#include "gui/main_window.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "plot_checks.h"
#include "quant_test_util.h"
#include "widgets/diff_page.h"
#include "widgets/diff_table_model.h"
#include "widgets/qcp.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fstream>

using namespace ql;

class TestGuiDiff : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_a, m_b;

    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }

    static nlohmann::json readJson(const QString& file) {
        std::ifstream in(file.toStdString());
        return nlohmann::json::parse(in);
    }

    // Runs a diff in the window and waits for it.
    static bool diffIn(MainWindow& w, const QString& b) {
        QSignalSpy shown(w.diffPage(), &DiffPage::shown);
        if (!w.diffPage()->diffAgainst(b)) return false;
        return shown.wait(60000);
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        // A: three weights; B: the first a few codes' worth off, the second equal, the third of another
        // shape (cannot be compared), plus a tensor each side alone.
        const auto up = qltest::normalValues(32 * 16, 11), down = qltest::normalValues(16 * 32, 12);
        std::vector<float> upB = up;
        for (std::size_t i = 0; i < upB.size(); i += 5)
            upB[i] = std::round(upB[i] * 16.0f) / 16.0f;
        m_a = path("a.safetensors").toStdString();
        m_b = path("b.safetensors").toStdString();
        writeSafetensors(m_a, {{"model.layers.0.mlp.up_proj.weight", Tensor::fromFloats({32, 16}, up)},
                               {"model.layers.0.mlp.down_proj.weight", Tensor::fromFloats({16, 32}, down)},
                               {"model.norm.weight", Tensor::fromFloats({4}, qltest::normalValues(4, 13))},
                               {"only.in.a", Tensor::fromFloats({2}, qltest::normalValues(2, 14))}});
        writeSafetensors(m_b, {{"blk.0.ffn_up.weight", Tensor::fromFloats({32, 16}, upB)},
                               {"blk.0.ffn_down.weight", Tensor::fromFloats({16, 32}, down)},
                               {"output_norm.weight", Tensor::fromFloats({5}, qltest::normalValues(5, 13))},
                               {"only.in.b", Tensor::fromFloats({2}, qltest::normalValues(2, 15))}});
    }

    void diffShowsWorstFirstWithCoreFigures() {
        MainWindow w;
        w.resize(900, 700);
        w.show();
        // The table checked through every reset and sort below, as every model is (tst_models).
        QAbstractItemModelTester tester(w.diffPage()->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(w.openFile(QString::fromStdString(m_a)));
        QVERIFY(diffIn(w, QString::fromStdString(m_b)));
        DiffPage* page = w.diffPage();
        QCOMPARE(w.tabs()->currentWidget(), page);
        DiffTableModel* model = page->model();
        QCOMPARE(model->rowCount(), 3);
        // The pair that cannot be compared first, with its reason; then the worst SQNR.
        QCOMPARE(model->index(0, DiffTableModel::NameColumn).data().toString(),
                 QStringLiteral("model.norm.weight"));
        QVERIFY(model->index(0, DiffTableModel::NoteColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("shapes differ")));
        QCOMPARE(model->index(1, DiffTableModel::NameColumn).data().toString(),
                 QStringLiteral("model.layers.0.mlp.up_proj.weight"));
        QCOMPARE(model->index(1, DiffTableModel::NameBColumn).data().toString(),
                 QStringLiteral("blk.0.ffn_up.weight"));
        QCOMPARE(model->index(1, DiffTableModel::MatchedColumn).data().toString(), QStringLiteral("gguf"));
        QVERIFY(!page->view()->isColumnHidden(DiffTableModel::NameBColumn)); // names differ: shown
        // Each row's figures are core's for that pair.
        const auto a = openTensorSource(m_a), b = openTensorSource(m_b);
        const TensorDiff up =
            diffTensors(*a, *b, {"model.layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight", "gguf"});
        QVERIFY(std::isfinite(up.stats.sqnrDb()) && up.maxUlp > 0);
        QCOMPARE(model->index(1, DiffTableModel::SqnrColumn).data().toString(),
                 QString::number(up.stats.sqnrDb(), 'g', 4));
        QCOMPARE(model->index(1, DiffTableModel::MaxUlpColumn).data().toString(), QString::number(up.maxUlp));
        QCOMPARE(model->index(2, DiffTableModel::SqnrColumn).data().toString(), QStringLiteral("∞"));
        QCOMPARE(model->index(2, DiffTableModel::MaxUlpColumn).data().toString(), QStringLiteral("0"));
        // The summary names what has no counterpart; the failing pair is in the message bar.
        QVERIFY2(page->summary()->text().contains(QStringLiteral("only.in.a")) &&
                     page->summary()->text().contains(QStringLiteral("only.in.b")),
                 qPrintable(page->summary()->text()));
        QVERIFY(w.errorText().contains(QStringLiteral("could not be compared")));
        // The worst row is selected; choosing another redraws the histogram with its counts.
        page->view()->selectRow(1);
        QCOMPARE(page->plot()->graphCount(), 1);
        double plotted = 0;
        for (auto it = page->plot()->graph(0)->data()->constBegin();
             it != page->plot()->graph(0)->data()->constEnd() - 1; ++it)
            plotted += it->value;
        QCOMPARE(plotted, static_cast<double>(32 * 16));
        // Its axes' labels leave room between them, at this size and in a narrow window.
        qltest::verifyTickLabelsApart(page->plot(), QStringLiteral("diff histogram"));
        if (QTest::currentTestFailed()) return;
        w.resize(380, 600);
        QApplication::processEvents();
        page->plot()->replot();
        qltest::verifyTickLabelsApart(page->plot(), QStringLiteral("diff histogram, narrow"));
        if (QTest::currentTestFailed()) return;
        w.resize(900, 700);
        QApplication::processEvents();
        QVERIFY(page->note()->text().contains(QStringLiteral("ULP")));
        // Sorting by another column and back keeps the rows' own figures.
        model->sort(DiffTableModel::MaxUlpColumn, Qt::AscendingOrder);
        QCOMPARE(model->index(1, DiffTableModel::NameColumn).data().toString(),
                 QStringLiteral("model.layers.0.mlp.up_proj.weight"));

        // The saved report is the CLI's, pair for pair.
        QString error;
        QVERIFY2(page->writeReport(path("gui-diff.json"), &error), qPrintable(error));
        const qltest::CliRun cli =
            qltest::runCli({QStringLiteral("diff"), QString::fromStdString(m_a), QString::fromStdString(m_b),
                            QStringLiteral("--report"), path("cli-diff.json"), QStringLiteral("-q")},
                           m_dir.path());
        QCOMPARE(cli.code, 1); // one pair could not be compared
        QCOMPARE(readJson(path("gui-diff.json"))["tensors"], readJson(path("cli-diff.json"))["tensors"]);

        // Another model: no diff of the last one stays on screen.
        const QString exact =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/types_4x256.expected.safetensors");
        QVERIFY(w.openFile(exact));
        QCOMPARE(model->rowCount(), 0);
        QCOMPARE(page->plot()->graphCount(), 0);
        QVERIFY(!page->writeReport(path("stale.json")));
        // A GGUF written by ggml against ggml's own dequantization of it: every pair exact.
        QVERIFY(diffIn(w, QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/types_4x256.gguf")));
        QVERIFY(model->rowCount() >= 10);
        for (int row = 0; row < model->rowCount(); ++row)
            QCOMPARE(model->index(row, DiffTableModel::MaxUlpColumn).data().toString(), QStringLiteral("0"));
        QVERIFY(page->view()->isColumnHidden(DiffTableModel::NameBColumn)); // all names exact
        QCOMPARE(page->plot()->xAxis->range().upper, 1.0); // equal tensors: a readable axis around zero
        QVERIFY(QDir().mkpath(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_diff.png")));
    }

    // A float model against its compressed-tensors export written by the CLI: the export's codes are
    // compared with A re-quantized under the window's spec (the same: none differ) and under another.
    void requantizedCodesAgainstAnExport() {
        QVERIFY(QDir().mkpath(path("export"))); // an export goes to a folder of its own
        const QString out = path("export/export.safetensors");
        const qltest::CliRun cli = qltest::runCli({QStringLiteral("quantize"), QString::fromStdString(m_a),
                                                   QStringLiteral("--all"), QStringLiteral("--preset"),
                                                   QStringLiteral("torch"), QStringLiteral("--out"), out},
                                                  m_dir.path());
        QVERIFY2(cli.code == 0, cli.err.constData());
        MainWindow w;
        w.show();
        QVERIFY(w.openFile(QString::fromStdString(m_a)));
        DiffPage* page = w.diffPage();
        QAbstractItemModelTester tester(page->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(diffIn(w, out)); // codes on one side only: nothing to compare code by code
        QVERIFY(page->view()->isColumnHidden(DiffTableModel::CodesColumn));
        page->setRequantize(true);
        QVERIFY(diffIn(w, out));
        QVERIFY(!page->view()->isColumnHidden(DiffTableModel::CodesColumn));
        QVERIFY(page->summary()->text().contains(QStringLiteral("re-quantized")));
        int compared = 0;
        for (int row = 0; row < page->model()->rowCount(); ++row) {
            const TensorDiff& d = page->model()->diffAt(row);
            if (!d.codes) continue;
            ++compared;
            QCOMPARE(d.codes->mismatches, 0);
            QCOMPARE(d.codes->scaleMismatches, 0);
            QVERIFY(page->model()
                        ->index(row, DiffTableModel::CodesColumn)
                        .data()
                        .toString()
                        .startsWith(QStringLiteral("all ")));
        }
        QCOMPARE(compared, 2); // the two 2-D weights
        QVERIFY(QDir().mkpath(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_diff_codes.png")));
    }

    void refusesWhatCannotBeDiffed() {
        MainWindow w;
        w.show();
        QVERIFY(!w.diffPage()->diffAgainst(QString::fromStdString(m_b))); // no model open
        QVERIFY(w.errorText().contains(QStringLiteral("Open a model file first")));
        QVERIFY(w.openFile(QString::fromStdString(m_a)));
        QSignalSpy ended(&w, &MainWindow::jobEnded);
        QVERIFY(w.diffPage()->diffAgainst(QString::fromStdString(m_a)));
        QVERIFY(ended.wait(60000));
        QVERIFY2(w.errorText().contains(QStringLiteral("is model A itself")), qPrintable(w.errorText()));
        QVERIFY(w.diffPage()->diffAgainst(path("missing.gguf")));
        QVERIFY(ended.wait(60000));
        QVERIFY2(w.errorText().contains(QStringLiteral("missing.gguf")), qPrintable(w.errorText()));
        QCOMPARE(w.diffPage()->model()->rowCount(), 0);
    }
};

QTEST_MAIN(TestGuiDiff)
#include "tst_gui_diff.moc"
