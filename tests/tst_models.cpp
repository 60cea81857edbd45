// Every item model the widgets expose passes QAbstractItemModelTester, and behaves as the pages
// rely on: the tensor tree groups by prefix, the filter keeps parents of matches, the model table
// sorts worst first.
#include "listing_source.h"
#include "widgets/diff_table_model.h"
#include "widgets/model_table_model.h"
#include "widgets/plan_table_model.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_tree_model.h"

#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTest>
#include <QTextDocument>

using namespace ql;

namespace {

std::vector<TensorInfo> inventory() {
    auto t = [](const char* name, const Shape& shape, DType d = DType::F32) {
        return TensorInfo{name, d, shape, static_cast<std::uint64_t>(elementCount(shape) * storageBytes(d)),
                          "fixture"};
    };
    return {t("model.layers.0.mlp.down_proj.weight", {64, 128}),
            t("model.layers.0.mlp.up_proj.weight", {128, 64}),
            t("model.layers.1.mlp.down_proj.weight", {64, 128}),
            t("model.embed_tokens.weight", {100, 64}),
            t("lm_head.weight", {100, 64}),
            t("scalar", {}),
            t("step", {1}, DType::I64)};
}

using qltest::ListingSource;

ModelRow row(const char* name, double sqnr, double maxErr, const char* error = "") {
    ModelRow r;
    r.name = name;
    r.shape = "[4, 4]";
    r.sqnrDb = sqnr;
    r.maxAbsError = maxErr;
    r.cosine = 0.99;
    r.error = error;
    return r;
}

// A pair whose B is A with every element off by `off` (SQNR falls as `off` grows); `failure` makes it
// one that could not be compared.
TensorDiff pairDiff(const char* name, float off, const char* failure = "") {
    TensorDiff d;
    d.pair = {name, name, "exact"};
    d.shape = {4};
    const std::vector<float> a{1.0f, -2.0f, 3.0f, -4.0f};
    std::vector<float> b = a;
    for (float& v : b)
        v += off;
    d.stats.add(a, b);
    d.maxUlp = off == 0.0f ? 0 : 1000;
    d.failure = failure;
    return d;
}

} // namespace

class TestModels : public QObject {
    Q_OBJECT
private slots:
    void tensorTreePassesTester() {
        TensorTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensors(inventory());
        model.setTensors({});
        model.setTensors(inventory());
    }

    void tensorTreeGroupsByPrefix() {
        TensorTreeModel model;
        model.setTensors(inventory());
        const QModelIndex leaf = model.indexOfTensor("model.layers.0.mlp.down_proj.weight");
        QVERIFY(leaf.isValid());
        QCOMPARE(leaf.data().toString(), QStringLiteral("down_proj.weight"));
        QCOMPARE(leaf.parent().data().toString(), QStringLiteral("mlp"));
        QCOMPARE(leaf.parent().parent().data().toString(), QStringLiteral("0"));
        QCOMPARE(leaf.siblingAtColumn(TensorTreeModel::ShapeColumn).data().toString(),
                 QStringLiteral("[64, 128]"));
        QCOMPARE(leaf.siblingAtColumn(TensorTreeModel::DTypeColumn).data().toString(), QStringLiteral("f32"));
        QCOMPARE(leaf.data(TensorTreeModel::TensorNameRole).toString(),
                 QStringLiteral("model.layers.0.mlp.down_proj.weight"));
        QVERIFY(model.indexOfTensor("scalar").isValid());
        QVERIFY(!model.indexOfTensor("model.layers").isValid()); // a prefix, not a tensor
        QVERIFY(!model.indexOfTensor("missing").isValid());
    }

    void hdf5PathsSplitOnSlash() {
        TensorTreeModel model;
        model.setTensors({TensorInfo{"/dense/kernel:0", DType::F32, {4, 4}, 64, ""}});
        const QModelIndex leaf = model.indexOfTensor("/dense/kernel:0");
        QVERIFY(leaf.isValid());
        QCOMPARE(leaf.data().toString(), QStringLiteral("kernel:0"));
        QCOMPARE(leaf.parent().data().toString(), QStringLiteral("dense"));
    }

    // A name that looks like markup is shown as text in tooltips (Qt would read it as HTML, and an
    // <img> in it would load a file).
    void tooltipsShowNamesAsText() {
        const std::string markup = "layers.0.<img src='/etc/hostname'>.weight";
        TensorTreeModel tree;
        tree.setTensors({TensorInfo{markup, DType::F32, {4, 4}, 64, "fixture"}});
        const QString tip = tree.indexOfTensor(markup).data(Qt::ToolTipRole).toString();
        QVERIFY2(!tip.contains(QStringLiteral("<img")) && tip.contains(QStringLiteral("&lt;img")),
                 qPrintable(tip));
        QTextDocument shown;
        shown.setHtml(tip);
        QVERIFY2(shown.toPlainText().startsWith(QString::fromStdString(markup) + QLatin1Char('\n')),
                 qPrintable(shown.toPlainText())); // the name as it is, then its own line
        ModelTableModel table;
        table.setRows({row(markup.c_str(), 30, 0.01, "<b>failed</b>")});
        const QString rowTip = table.index(0, 0).data(Qt::ToolTipRole).toString();
        QVERIFY2(!rowTip.contains(QStringLiteral("<b>")) && !rowTip.contains(QStringLiteral("<img")),
                 qPrintable(rowTip));
    }

    void browserFilterKeepsParents() {
        TensorBrowser browser;
        ListingSource source(inventory());
        QAbstractItemModelTester tester(browser.proxy(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        browser.setSource(&source);
        QTest::keyClicks(browser.filterEdit(), QStringLiteral("up_proj"));
        QCOMPARE(browser.proxy()->rowCount(), 1); // "model" only
        QVERIFY(browser.selectTensor("model.layers.0.mlp.up_proj.weight"));
        QCOMPARE(browser.selectedTensor(), std::string("model.layers.0.mlp.up_proj.weight"));
        // Selecting a tensor the filter hides clears the filter instead of failing.
        QVERIFY(browser.selectTensor("lm_head.weight"));
        QVERIFY(browser.filterEdit()->text().isEmpty());
        QCOMPARE(browser.firstTensorOfRank(2), std::string("model.layers.0.mlp.down_proj.weight"));
        QCOMPARE(browser.firstTensorOfRank(1), std::string()); // "step" is I64, not floating
    }

    void modelTablePassesTesterAndSortsWorstFirst() {
        ModelTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows({row("good", 50, 0.01), row("bad", 20, 0.5), row("broken", 0, 0, "axis out of range"),
                       row("mid", 35, 0.02)});
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("broken")); // failures first
        QCOMPARE(model.index(1, 0).data().toString(), QStringLiteral("bad"));
        QCOMPARE(model.index(3, 0).data().toString(), QStringLiteral("good"));
        QCOMPARE(model.index(0, ModelTableModel::SqnrColumn).data().toString(), QStringLiteral("—"));
        QPersistentModelIndex good = model.index(3, 0);
        model.sort(ModelTableModel::MaxErrorColumn, Qt::DescendingOrder); // best end first
        QCOMPARE(good.data().toString(), QStringLiteral("good")); // persistent indexes follow their rows
        model.sort(ModelTableModel::SqnrColumn, Qt::AscendingOrder);
        QCOMPARE(model.index(1, 0).data(ModelTableModel::TensorNameRole).toString(), QStringLiteral("bad"));
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }

    // With importance, the weighted SQNR ranks the rows (a tensor with a fine plain SQNR can lose the
    // most in its output).
    void modelTableRanksByWeightedSqnr() {
        ModelTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto a = row("a", 20, 0.1), b = row("b", 40, 0.1);
        a.weightedSqnrDb = 30, b.weightedSqnrDb = 10;
        model.setRows({a, b});
        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("b"));
        QCOMPARE(model.index(0, ModelTableModel::WeightedSqnrColumn).data().toString(), QStringLiteral("10"));
        model.sort(ModelTableModel::SqnrColumn, Qt::AscendingOrder);
        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("a"));
    }

    // The diff table under the tester, through resets and sorts; a selected pair stays selected (its
    // persistent index follows it) when the table is sorted by another column.
    void diffTablePassesTesterAndSelectionFollowsSort() {
        DiffTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto outcome = std::make_shared<DiffOutcome>();
        outcome->diffs = {pairDiff("close", 0.001f), pairDiff("far", 0.5f), pairDiff("equal", 0.0f),
                          pairDiff("shapes", 0.0f, "shapes differ")};
        model.setOutcome(outcome);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), int(DiffTableModel::ColumnCount));
        const auto name = [&](int row) {
            return model.index(row, DiffTableModel::NameColumn).data().toString();
        };
        QCOMPARE(name(0), QStringLiteral("shapes")); // could not compare: first
        QCOMPARE(name(1), QStringLiteral("far"));
        QCOMPARE(name(2), QStringLiteral("close"));
        QCOMPARE(name(3), QStringLiteral("equal"));
        QCOMPARE(model.index(1, 0).data(DiffTableModel::DiffIndexRole).toULongLong(), 1ull);
        const QPersistentModelIndex far = model.index(1, DiffTableModel::SqnrColumn);
        const QPersistentModelIndex equal = model.index(3, DiffTableModel::NameColumn);
        model.sort(DiffTableModel::NameColumn, Qt::AscendingOrder);
        QCOMPARE(name(0), QStringLiteral("close"));
        QCOMPARE(far.row(), 2);
        QCOMPARE(far.column(), int(DiffTableModel::SqnrColumn));
        QCOMPARE(model.index(far.row(), DiffTableModel::NameColumn).data().toString(), QStringLiteral("far"));
        QCOMPARE(equal.data().toString(), QStringLiteral("equal"));
        model.sort(DiffTableModel::SqnrColumn, Qt::DescendingOrder); // the best end first
        QCOMPARE(name(0), QStringLiteral("equal"));
        QCOMPARE(equal.row(), 0);
        QCOMPARE(model.diffAt(far.row()).pair.a, std::string("far"));
        model.setOutcome(nullptr);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!far.isValid()); // a reset drops what pointed into the old rows
    }

    void planTablePassesTester() {
        PlanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto m = std::make_shared<PlanMeasurements>();
        m->candidates = planCandidatesNamed({"int4-g32", "keep"});
        auto cell = [](std::int64_t bits, double error, double sqnrDb, std::string why = {}) {
            PlanCell c;
            c.bits = bits;
            c.error = error;
            c.sqnrDb = sqnrDb;
            c.why = std::move(why);
            return c;
        };
        auto tensor = [](std::string name, Shape shape, std::vector<PlanCell> cells) {
            PlanTensor t;
            t.name = std::move(name);
            t.elements = elementCount(shape);
            t.shape = std::move(shape);
            t.dtype = DType::BF16;
            t.cells = std::move(cells);
            return t;
        };
        m->tensors = {tensor("x.weight", {4, 32}, {cell(576, 2.0, 20.0), cell(2048, 0.0, INFINITY)}),
                      tensor("y.weight", {4, 30},
                             {cell(-1, NAN, NAN, "blocks of 32 do not fit"), cell(1920, 0.0, INFINITY)})};
        m->notPlanned = {{"x.bias", "a bias, norm or scale vector (rank 1), not a weight"}};
        const PlanResult r = choosePlan(*m, {11.0, 0});
        model.setPlan(m, r);
        QCOMPARE(model.plannedRows(), 2);
        QCOMPARE(model.rowCount(), 3); // then what was not planned, with the reason
        QCOMPARE(model.index(2, PlanTableModel::NameColumn).data().toString(), QStringLiteral("x.bias"));
        QCOMPARE(model.index(2, PlanTableModel::FormatColumn).data().toString(),
                 QStringLiteral("not planned"));
        QCOMPARE(model.index(2, PlanTableModel::NoteColumn).data().toString(),
                 QString::fromStdString(m->notPlanned[0].second));
        QVERIFY(model.index(2, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("not a weight")));
        QCOMPARE(model.index(0, PlanTableModel::FormatColumn).data().toString(), QStringLiteral("int4-g32"));
        QCOMPARE(model.index(1, PlanTableModel::FormatColumn).data().toString(), QStringLiteral("keep"));
        QVERIFY(model.index(1, 0)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("blocks of 32 do not fit")));
        QCOMPARE(model.index(0, PlanTableModel::BitsColumn).data().toString(), QStringLiteral("4.5"));
        model.setPlan(nullptr, {});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestModels)
#include "tst_models.moc"
