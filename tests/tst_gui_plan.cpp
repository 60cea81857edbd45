// The Plan tab and importance in the real main window (offscreen): measure the formats of a model,
// move the budget and see the choice follow the solver, write the plan's three forms, export the
// weights; open an importance file and see the whole-model table rank by the weighted SQNR.
#include "gui/main_window.h"
#include "job/plan_output.h"
#include "plan_test_util.h"
#include "plot_checks.h"
#include "widgets/job_runner.h"
#include "widgets/model_table_model.h"
#include "widgets/model_table_page.h"
#include "widgets/plan_page.h"
#include "widgets/plan_table_model.h"
#include "widgets/qcp.h"
#include "widgets/workbench.h"

#include <QAction>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace ql;
using namespace qltest;

class TestGuiPlan : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    PlanFixture m_fixture;

    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_fixture = writePlanFixture(m_dir.path().toStdString());
    }

    void measureChooseAndExport() {
        MainWindow w;
        w.show();
        QVERIFY(w.openFile(QString::fromStdString(m_fixture.model)));
        PlanPage* page = w.planPage();
        page->setCandidatesChecked(
            {QStringLiteral("int4-g32"), QStringLiteral("int8-channel"), QStringLiteral("keep")});
        page->setBudget(6.0);
        QSignalSpy shown(w.planPage(), &PlanPage::measured);
        QPushButton* measure = nullptr;
        for (auto* b : page->findChildren<QPushButton*>())
            if (b->text() == QStringLiteral("Measure formats")) measure = b;
        QVERIFY(measure);
        QTest::mouseClick(measure, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        QCOMPARE(w.tabs()->currentWidget(), page);
        QCOMPARE(page->model()->plannedRows(), 7);
        // Then what was not planned, each with the reason, as quantlens-cli plan lists them.
        QCOMPARE(page->model()->rowCount(), 9);
        QCOMPARE(page->measurements()->notPlanned.size(), std::size_t{2});
        for (int row = 7; row < 9; ++row) {
            const auto& [name, why] = page->measurements()->notPlanned[static_cast<std::size_t>(row - 7)];
            QCOMPARE(page->model()->index(row, PlanTableModel::NameColumn).data().toString(),
                     QString::fromStdString(name));
            QCOMPARE(page->model()->index(row, PlanTableModel::NoteColumn).data().toString(),
                     QString::fromStdString(why));
            QVERIFY(!why.empty());
        }
        QStringList notPlanned{page->model()->index(7, PlanTableModel::NameColumn).data().toString(),
                               page->model()->index(8, PlanTableModel::NameColumn).data().toString()};
        notPlanned.sort();
        QCOMPARE(notPlanned, (QStringList{QStringLiteral("model.embed_tokens.weight"),
                                          QStringLiteral("model.norm.weight")}));
        // The filter box keeps the rows whose name holds its text, planned or not; the page's model
        // keeps every row.
        QTest::keyClicks(page->filterBox(), QStringLiteral("NORM"));
        QCOMPARE(page->view()->model()->rowCount(), 1);
        QCOMPARE(page->view()->model()->index(0, PlanTableModel::NameColumn).data().toString(),
                 QStringLiteral("model.norm.weight"));
        page->filterBox()->clear();
        QTest::keyClicks(page->filterBox(), QStringLiteral("proj"));
        int projections = 0;
        for (int row = 0; row < page->model()->rowCount(); ++row)
            projections += page->model()
                               ->index(row, PlanTableModel::NameColumn)
                               .data()
                               .toString()
                               .contains(QStringLiteral("proj"));
        QVERIFY(projections > 1 && projections < page->model()->rowCount());
        QCOMPARE(page->view()->model()->rowCount(), projections);
        QCOMPARE(page->model()->rowCount(), 9);
        page->filterBox()->clear();
        QCOMPARE(page->view()->model()->rowCount(), 9);
        QVERIFY2(page->summary()->text().contains(QStringLiteral("2 other tensor(s) kept as they are")),
                 qPrintable(page->summary()->text()));
        QVERIFY(page->result().has_value());
        // The page shows what the core solver chooses for the same measurements and budget.
        const PlanResult expected = choosePlan(*page->measurements(), {6.0, 0});
        QCOMPARE(page->result()->solution.choice, expected.solution.choice);
        for (int row = 0; row < 7; ++row) {
            const auto k = static_cast<std::size_t>(expected.solution.choice[static_cast<std::size_t>(row)]);
            QCOMPARE(page->model()->index(row, PlanTableModel::FormatColumn).data().toString(),
                     QString::fromStdString(page->measurements()->candidates[k].name));
        }
        QVERIFY(page->summary()->text().contains(QStringLiteral("bits per weight")));
        QVERIFY(page->plot()->graphCount() >= 1 && page->plot()->graph(0)->dataCount() >= 2);
        page->plot()->replot();
        qltest::verifyTickLabelsApart(page->plot(), QStringLiteral("plan front"));
        if (QTest::currentTestFailed()) return;
        // A lower budget: fewer bits, more error, no new measuring.
        const double before = page->result()->solution.error;
        page->setBudget(4.6);
        QVERIFY(page->result()->bitsPerWeight(*page->measurements()) <= 4.6);
        QVERIFY(page->result()->solution.error > before);
        QCOMPARE(shown.count(), 1);
        // Too low: said, nothing chosen, exports off.
        page->setBudget(1.0);
        QVERIFY(!page->result());
        QVERIFY(page->summary()->text().contains(QStringLiteral("no plan fits")));
        page->setBudget(6.0);

        // The three text forms, and the plan file read back.
        QVERIFY(page->writeRules(path("rules.txt")));
        QVERIFY(page->writeRecipe(path("recipe.yaml")));
        QVERIFY(page->writePlanFile(path("plan.json")));
        QVERIFY(QFile(path("rules.txt")).size() > 0 && QFile(path("recipe.yaml")).size() > 0);
        const auto choice = page->result()->solution.choice;
        page->clear(QStringLiteral("-"));
        QVERIFY(page->readPlanFile(path("plan.json")));
        QCOMPARE(page->result()->solution.choice, choice);
        QString error;
        QVERIFY(!page->readPlanFile(QString::fromStdString(m_fixture.model), &error));
        QVERIFY2(error.contains(QStringLiteral("model.safetensors")), qPrintable(error));

        // The weights, through the runner.
        QSignalSpy exported(w.planPage(), &PlanPage::weightsExported);
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("out")));
        QVERIFY(w.planPage()->exportWeights(path("out/model.safetensors")));
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 60000);
        QVERIFY(QFile::exists(path("out/config.json")));
        QVERIFY(w.errorText().isEmpty());
    }

    // After Quantize all the page sums the model up from the run's reports: the counts, the error of
    // every quantized weight together, the worst tensor and why the others were kept.
    void wholeModelSummary() {
        MainWindow w;
        QVERIFY(w.openFile(QString::fromStdString(m_fixture.model)));
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QTRY_COMPARE_WITH_TIMEOUT(model.count(), 1, 60000);
        const auto& reports = w.modelTable()->outcome()->reports;
        double signal = 0, noise = 0, worstSqnr = INFINITY;
        std::int64_t values = 0;
        std::string worst, keptReason;
        int quantized = 0;
        for (const TensorReport& r : reports) {
            if (!r.passedThrough.empty()) {
                keptReason = r.passedThrough;
                continue;
            }
            QVERIFY2(r.error.empty(), r.error.c_str());
            ++quantized;
            const ErrorStats::Sums sums = r.analysis.stats.sums();
            signal += sums.sumSqX;
            noise += sums.sumSqErr;
            values += sums.count;
            if (r.analysis.stats.sqnrDb() < worstSqnr) worstSqnr = r.analysis.stats.sqnrDb(), worst = r.name;
        }
        QCOMPARE(quantized, 8);
        const QString text = w.modelTable()->summaryText();
        QVERIFY2(text.startsWith(QStringLiteral("8 tensor(s) quantized; 1 kept")), qPrintable(text));
        const QString overall = QStringLiteral("Overall SQNR %1 dB over %2 quantized values of 8 tensor(s)")
                                    .arg(QString::number(10 * std::log10(signal / noise), 'f', 2))
                                    .arg(values);
        QVERIFY2(text.contains(overall), qPrintable(text + QStringLiteral("\nwanted: ") + overall));
        const QString worstText = QStringLiteral("worst tensor %1 at %2 dB")
                                      .arg(QString::fromStdString(worst), QString::number(worstSqnr, 'f', 2));
        QVERIFY2(text.contains(worstText), qPrintable(text + QStringLiteral("\nwanted: ") + worstText));
        // The worst is the table's first row: one ranking.
        QCOMPARE(w.modelTable()->model()->rows().front().name, worst);
        QVERIFY2(text.contains(QStringLiteral("\nKept unquantized, 1 tensor(s): ") +
                               QString::fromStdString(keptReason)),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("\nWeights ")) &&
                     text.contains(QStringLiteral(" bits per weight.")),
                 qPrintable(text));
        // The run's report opened again reads the same: its entries summed up by the same core summary.
        QVERIFY(w.exportReport(path("summary.json")));
        QVERIFY(w.modelTable()->openReport(path("summary.json")));
        QCOMPARE(w.modelTable()->summaryText(), text);
    }

    // The whole-model table's filter: the view shows the rows whose name holds the text, and a row
    // activated through it opens that row's tensor.
    void wholeModelTableFilter() {
        MainWindow w;
        QVERIFY(w.openFile(QString::fromStdString(m_fixture.model)));
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QTRY_COMPARE_WITH_TIMEOUT(model.count(), 1, 60000);
        QTableView* view = w.modelTable()->view();
        QCOMPARE(view->model()->rowCount(), 9);
        QTest::keyClicks(w.modelTable()->filterBox(), QStringLiteral("Q_PROJ"));
        QCOMPARE(view->model()->rowCount(), 1);
        const QString name = view->model()->index(0, ModelTableModel::NameColumn).data().toString();
        QVERIFY2(name.endsWith(QStringLiteral("q_proj.weight")), qPrintable(name));
        QSignalSpy activated(w.modelTable(), &ModelTablePage::tensorActivated);
        emit view->doubleClicked(view->model()->index(0, ModelTableModel::SqnrColumn));
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.front().front().toString(), name);
        // Sorting still sorts the model's rows, and the filter keeps to its text.
        view->sortByColumn(ModelTableModel::NameColumn, Qt::AscendingOrder);
        QCOMPARE(view->model()->rowCount(), 1);
        w.modelTable()->filterBox()->clear();
        QCOMPARE(view->model()->rowCount(), 9);
    }

    // Check against rules marks every failing row and lists every failure (more than eight here),
    // each with every rule it broke, as quantlens-cli check does.
    void checkMarksAndListsEveryFailure() {
        const QString sample =
            QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        MainWindow w;
        QVERIFY(w.openFile(sample));
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QTRY_COMPARE_WITH_TIMEOUT(model.count(), 1, 60000);
        ModelTableModel* table = w.modelTable()->model();
        std::vector<std::string> quantized;
        for (const ModelRow& r : table->rows())
            if (r.kept.empty() && r.error.empty()) quantized.push_back(r.name);
        QVERIFY(quantized.size() > 8);
        // Every quantized tensor fails both rules; one rule more fails the smallest ones only.
        const QString rules = path("every.rules");
        QFile f(rules);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("sqnr < 1000\ncosine < 2\n");
        f.close();
        QVERIFY(!w.modelTable()->checkRules(rules));
        const QString message = w.errorText();
        QVERIFY2(message.contains(QStringLiteral("%1 of %1 fail").arg(quantized.size())),
                 qPrintable(message));
        QVERIFY2(!message.contains(QStringLiteral("more")), qPrintable(message));
        for (const std::string& name : quantized) {
            const QString line = QString::fromStdString(name) + QStringLiteral(": sqnr < 1000");
            QVERIFY2(message.contains(line), qPrintable(message));
        }
        QCOMPARE(message.count(QStringLiteral("cosine < 2")), static_cast<qsizetype>(quantized.size()));
        // The rows: quantized ones marked, with the broken rules in the Problem column; kept ones not.
        for (int row = 0; row < table->rowCount(); ++row) {
            const ModelRow& r = table->rows()[static_cast<std::size_t>(row)];
            const bool checked = r.kept.empty() && r.error.empty();
            const QModelIndex name = table->index(row, ModelTableModel::NameColumn);
            QCOMPARE(name.data(ModelTableModel::CheckFailedRole).toBool(), checked);
            QCOMPARE(name.data(Qt::BackgroundRole).isValid(), checked);
            const QString problem = table->index(row, ModelTableModel::ErrorColumn).data().toString();
            QCOMPARE(problem.contains(QStringLiteral("fails sqnr < 1000")), checked);
            QCOMPARE(table->checkFailures(row).size(), checked ? std::size_t{2} : std::size_t{0});
        }
        // For a person to look at: the marked table at 1280x800, where QUANTLENS_SCREENSHOT_DIR says.
        if (const QString dir = qEnvironmentVariable("QUANTLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            w.resize(1280, 800);
            w.show();
            w.tabs()->setCurrentWidget(w.modelTable());
            QTest::qWait(50);
            QVERIFY(w.grab().save(dir + QStringLiteral("/check_marks_1280x800.png")));
        }
        // Rules nothing breaks clear the marks.
        QFile g(rules);
        QVERIFY(g.open(QIODevice::WriteOnly));
        g.write("sqnr < -1000\n");
        g.close();
        QVERIFY(w.modelTable()->checkRules(rules));
        for (int row = 0; row < table->rowCount(); ++row)
            QVERIFY(!table->index(row, 0).data(ModelTableModel::CheckFailedRole).toBool());
    }

    // The notes quantlens-cli plan prints show in the message bar: here, with an importance file that
    // has activations for q_proj only, each other planned weight is named as weighed by nothing.
    void planNotesShowInTheMessageBar() {
        const std::string stats = path("q-only.safetensors").toStdString();
        {
            std::vector<float> x(48 * 256, 1.0f);
            ql::writeSafetensors(
                stats, {{"model.layers.0.self_attn.q_proj.inputs", Tensor::fromFloats({48, 256}, x)}});
        }
        MainWindow w;
        QVERIFY(w.openFile(QString::fromStdString(m_fixture.model)));
        QVERIFY2(w.workbench()->openImportance(QString::fromStdString(stats)), qPrintable(w.errorText()));
        PlanPage* page = w.planPage();
        page->setCandidatesChecked({QStringLiteral("int4-g32"), QStringLiteral("keep")});
        QSignalSpy shown(page, &PlanPage::measured);
        page->measure();
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
        const QString notes = w.messageText();
        for (const PlanModule& m : planModules()) {
            const QString weight = QString::fromLatin1(m.name) + QStringLiteral(".weight'");
            QCOMPARE(notes.contains(weight), std::string(m.name).find("q_proj") == std::string::npos);
        }
        QCOMPARE(notes.count(QLatin1Char('\n')), 5); // one line per weight without an entry
        QVERIFY(w.errorText().isEmpty());
    }

    void importanceRanksTheWholeModelTable() {
        MainWindow w;
        w.show();
        QVERIFY(w.openFile(QString::fromStdString(m_fixture.model)));
        QVERIFY(!w.workbench()->openImportance(path("no-such.dat")));
        QVERIFY(w.errorText().contains(QStringLiteral("no-such.dat")));
        QVERIFY(w.workbench()->openImportance(QString::fromStdString(m_fixture.stats)));
        QSignalSpy model(w.modelTable(), &ModelTablePage::shown);
        w.quantizeAll();
        QTRY_COMPARE_WITH_TIMEOUT(model.count(), 1, 60000);
        const auto* table = w.modelTable()->findChild<QTableView*>();
        QVERIFY(!table->isColumnHidden(ModelTableModel::WeightedSqnrColumn));
        const auto* m = w.modelTable()->findChild<QTableView*>()->model();
        // Quantized rows are ranked by the weighted SQNR, worst first.
        double last = -INFINITY;
        int weighted = 0;
        for (int row = 0; row < m->rowCount(); ++row) {
            const QString text = m->index(row, ModelTableModel::WeightedSqnrColumn).data().toString();
            bool ok = false;
            const double v = text.toDouble(&ok);
            if (!ok) continue;
            QVERIFY2(v >= last, qPrintable(text));
            last = v;
            ++weighted;
        }
        QCOMPARE(weighted, 7);
        QVERIFY2(w.modelTable()->summaryText().contains(QStringLiteral("8 tensor(s) quantized; 1 kept")),
                 qPrintable(w.modelTable()->summaryText()));
        int normRows = 0;
        for (int row = 0; row < m->rowCount(); ++row)
            if (m->index(row, ModelTableModel::NameColumn).data(ModelTableModel::TensorNameRole).toString() ==
                QStringLiteral("model.norm.weight")) {
                ++normRows;
                const QString tip =
                    m->index(row, ModelTableModel::NameColumn).data(Qt::ToolTipRole).toString();
                QVERIFY2(tip.contains(QStringLiteral("kept unquantized")) &&
                             tip.contains(QStringLiteral("not a weight")),
                         qPrintable(tip));
            }
        QCOMPARE(normRows, 1); // kept, and listed

        // The CI gate's rules on the same table, as quantlens-cli check reads them.
        const QString lax = path("lax.rules"), strict = path("strict.rules");
        QFile f(lax);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# nothing fails these\nweighted_sqnr < -1000\nsqnr < -1000\n");
        f.close();
        QFile g(strict);
        QVERIFY(g.open(QIODevice::WriteOnly));
        g.write("weighted_sqnr < 1000\n");
        g.close();
        QVERIFY(w.modelTable()->checkRules(lax));
        QVERIFY(w.errorText().isEmpty());
        QVERIFY(!w.modelTable()->checkRules(strict));
        // Checked: the 7 projections and the embedding table; the norm vector was kept (weights only,
        // as quantlens-cli quantize --all), so no rule checks it.
        QVERIFY2(w.errorText().contains(QStringLiteral("7 of 8 fail")), qPrintable(w.errorText()));
        QVERIFY(!w.modelTable()->checkRules(path("no-such.rules")));
        QVERIFY(w.errorText().contains(QStringLiteral("no-such.rules")));
    }
};

QTEST_MAIN(TestGuiPlan)
#include "tst_gui_plan.moc"
