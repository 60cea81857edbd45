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
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

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
