// The tensor list, the save dialog and the result tables as people expect them: a typed
// extension is kept whatever filter is selected, a GGUF tensor shows the type the file stores, long
// names that differ in one part stay apart however narrow their column, and a filter box narrows a
// result table to the names holding its text.
#include "file_dialog_answer.h"
#include "gguf_test_util.h"
#include "listing_source.h"
#include "widgets/name_elision.h"
#include "widgets/result_table.h"
#include "widgets/save_file.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_tree_model.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFontMetrics>
#include <QLineEdit>
#include <QMap>
#include <QSet>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace ql;

namespace {

// Names as a Paddle model converted to HDF5 spells them: alike but for one part in the middle.
const QStringList kAlikeNames = {
    QStringLiteral("model_weights/If_1_then_branch_param_conv/weight"),
    QStringLiteral("model_weights/If_2_then_branch_param_conv/weight"),
    QStringLiteral("model_weights/If_12_then_branch_param_conv/weight"),
    QStringLiteral("model_weights/If_1_else_branch_param_conv/weight"),
};

// Silero VAD v5's weights as its ONNX file names them (subgraph tensors keep their branch's path): each
// layer twice, the then- and the else-branch alike but for one word near the start.
QStringList sileroNames() {
    QStringList names;
    for (const char* branch : {"then", "else"})
        for (const char* tensor :
             {"encoder.0.reparam_conv.weight", "encoder.1.reparam_conv.weight", "encoder.0.reparam_conv.bias",
              "decoder.rnn.weight_ih", "decoder.rnn.weight_hh", "decoder.decoder.2.weight",
              "stft.forward_basis_buffer"})
            names << QStringLiteral("If_0/%1_branch/If_0_%1_branch__Inline_0__%2")
                         .arg(QLatin1String(branch), QLatin1String(tensor));
    return names;
}

using qltest::ListingSource;

} // namespace

class TestWidgetsBrowser : public QObject {
    Q_OBJECT
private slots:
    // The rule the dialog's answer goes through, for each kind of name typed.
    void filterExtensionRule_data() {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("saved");
        const QString safetensors = QStringLiteral("safetensors (*.safetensors)");
        const QString hdf5 = QStringLiteral("HDF5 (*.h5 *.hdf5)");
        QTest::addRow("h5-typed-safetensors-selected") << safetensors << "x.h5"
                                                       << "x.h5";
        QTest::addRow("hdf5-typed-safetensors-selected") << safetensors << "x.hdf5"
                                                         << "x.hdf5";
        QTest::addRow("safetensors-typed-hdf5-selected") << hdf5 << "x.safetensors"
                                                         << "x.safetensors";
        QTest::addRow("none-typed-gets-selected") << hdf5 << "weights"
                                                  << "weights.h5";
        QTest::addRow("unoffered-typed-gets-selected") << safetensors << "w.v2"
                                                       << "w.v2.safetensors";
        QTest::addRow("case-kept") << safetensors << "X.H5"
                                   << "X.H5";
    }
    void filterExtensionRule() {
        QFETCH(QString, filter);
        QFETCH(QString, typed);
        QFETCH(QString, saved);
        const QString filters = QStringLiteral("safetensors (*.safetensors);;HDF5 (*.h5 *.hdf5)");
        QCOMPARE(withFilterExtension(QStringLiteral("out/") + typed, filter, filters),
                 QStringLiteral("out/") + saved);
    }

    // The real dialog, answered as a user did: x.h5 typed with the safetensors filter
    // still selected is saved as x.h5, not x.h5.safetensors.
    void saveDialogKeepsTypedExtension() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString filters = QStringLiteral("safetensors (*.safetensors);;HDF5 (*.h5 *.hdf5)");
        const qltest::FileDialogAnswer answer(QStringLiteral("safetensors (*.safetensors)"),
                                              dir.filePath(QStringLiteral("x.h5")));
        const QString path = saveFileName(nullptr, QStringLiteral("Export quantized weights"), filters);
        QVERIFY(answer.answered());
        QCOMPARE(QFileInfo(path).fileName(), QStringLiteral("x.h5"));
        QCOMPARE(QFileInfo(path).absolutePath(), QFileInfo(dir.path()).absoluteFilePath());
    }

    // A GGUF file's Q4_K tensor is read as f32, but the DType column says what the file stores.
    void ggufShowsStoredType() {
        using namespace qltest::gguf_bytes;
        std::string infos = info("blk.0.ffn_down.weight", {256, 2}, 12, 0); // Q4_K: 2 × 144 bytes
        infos += info("blk.0.attn_q.weight", {32, 2}, 8, 288);              // Q8_0: 2 × 34 bytes
        infos += info("output_norm.weight", {8}, 0, 384);                   // F32: 32 bytes
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("tiny.gguf"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            const std::string bytes = gguf(0, {}, 3, infos, 416);
            f.write(bytes.data(), static_cast<qint64>(bytes.size()));
        }
        const auto source = openTensorSource(path.toStdString());
        QCOMPARE(source->tensors().size(), std::size_t{3});
        TensorTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensors(source->tensors());
        auto dtypeOf = [&](const char* name) {
            const QModelIndex i = model.indexOfTensor(name);
            return i.siblingAtColumn(TensorTreeModel::DTypeColumn).data().toString();
        };
        QCOMPARE(dtypeOf("blk.0.ffn_down.weight"), QStringLiteral("Q4_K"));
        QCOMPARE(dtypeOf("blk.0.attn_q.weight"), QStringLiteral("Q8_0"));
        QCOMPARE(dtypeOf("output_norm.weight"), QStringLiteral("f32"));
        const QString tip = model.indexOfTensor("blk.0.ffn_down.weight").data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("Q4_K (read as f32)")), qPrintable(tip));
    }

    // However narrow, names that differ in one part read apart, each keeps its last part, and a
    // name that fits is shown whole.
    void elidedNamesStayApart_data() {
        QTest::addColumn<int>("width");
        for (int w : {120, 160, 200, 260})
            QTest::addRow("%d-px", w) << w;
    }
    void elidedNamesStayApart() {
        QFETCH(int, width);
        const QFontMetrics metrics(QApplication::font());
        QSet<QString> shown;
        for (const QString& name : kAlikeNames) {
            const QString s = elideName(name, metrics, width);
            QVERIFY2(metrics.horizontalAdvance(s) <= width, qPrintable(s));
            QVERIFY2(s.endsWith(QStringLiteral("/weight")), qPrintable(s));
            shown.insert(s);
        }
        QCOMPARE(shown.size(), kAlikeNames.size());
        QCOMPARE(elideName(QStringLiteral("lm_head.weight"), metrics, width),
                 QStringLiteral("lm_head.weight"));
    }

    // Silero VAD's subgraph names in one flat table: every name reads apart from the others at every
    // width, the then- and else-branch copies of a layer too; each fits and ends as the name does.
    // Names elideName already tells apart keep its text.
    void sileroBranchesStayApart_data() {
        QTest::addColumn<int>("width");
        for (int w : {120, 150, 180, 220, 260, 320})
            QTest::addRow("%d-px", w) << w;
    }
    void sileroBranchesStayApart() {
        QFETCH(int, width);
        const QFontMetrics metrics(QApplication::font());
        const QStringList names = sileroNames();
        const QStringList shown = elideNames(names, metrics, width);
        QCOMPARE(shown.size(), names.size());
        QMap<QString, QString> nameOf; // text -> the name it shows
        for (qsizetype i = 0; i < names.size(); ++i) {
            const QString& s = shown[i];
            QVERIFY2(metrics.horizontalAdvance(s) <= width, qPrintable(s));
            QVERIFY2(s.endsWith(names[i].right(3)), qPrintable(s));
            QVERIFY2(!nameOf.contains(s), qPrintable(s + QStringLiteral(" shows both ") + nameOf.value(s) +
                                                     QStringLiteral(" and ") + names[i]));
            nameOf.insert(s, names[i]);
        }
        QCOMPARE(elideNames(kAlikeNames, metrics, width), [&] {
            QStringList one;
            for (const QString& n : kAlikeNames)
                one << elideName(n, metrics, width);
            return one;
        }());
    }

    // A crafted file's thousands of names shown alike are not compared each with each (the square of
    // their count): past kMaxTold alike they keep elideName's text; a smaller group is still told apart.
    void manyNamesShownAlikeStayCheap() {
        const QFontMetrics metrics(QApplication::font());
        QStringList many, few;
        for (int i = 0; i < 5000; ++i)
            many << QStringLiteral("model/encoder/layer_%1/block/attention/out_proj/weight").arg(i);
        for (int i = 0; i < 8; ++i)
            few << many[i];
        const int width = 120;
        const QStringList shown = elideNames(many, metrics, width);
        QCOMPARE(shown.size(), many.size());
        for (qsizetype i = 0; i < many.size(); i += 499)
            QCOMPARE(shown[i], elideName(many[i], metrics, width));
        QVERIFY(shown[0] == shown[1]); // alike, as elideName shows them
        const QStringList told = elideNames(few, metrics, width);
        QCOMPARE(QSet<QString>(told.begin(), told.end()).size(), few.size());
    }

    // A result table draws the same: at 180 px every Silero name in the column reads apart.
    void sileroResultTable() {
        QStandardItemModel model(0, 2);
        for (const QString& name : sileroNames())
            model.appendRow({new QStandardItem(name), new QStandardItem(QStringLiteral("1.0"))});
        QTableView view;
        styleResultTable(&view);
        filterResultRows(&view, &model, 0);
        view.resize(800, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        fitResultColumns(&view, {0});
        view.setColumnWidth(0, 180);
        const auto* delegate = qobject_cast<NameElisionDelegate*>(view.itemDelegateForColumn(0));
        QVERIFY(delegate);
        QStyleOptionViewItem option;
        option.initFrom(&view);
        QSet<QString> shown;
        for (int r = 0; r < view.model()->rowCount(); ++r) {
            const QModelIndex i = view.model()->index(r, 0);
            const QString s = delegate->shownText(i, option, view.visualRect(i).width());
            QVERIFY2(s != i.data().toString(), qPrintable(s)); // narrow enough to need shortening
            shown.insert(s);
        }
        QCOMPARE(shown.size(), sileroNames().size());
    }

    // The browser draws its leaves through the same rule ("backbone" > "If_1_…_conv.weight"), and
    // the tooltip holds the whole name.
    void browserNamesStayApart() {
        std::vector<TensorInfo> infos;
        for (QString name : kAlikeNames)
            infos.push_back(
                TensorInfo{name.replace(QStringLiteral("model_weights/"), QStringLiteral("backbone."))
                               .replace(QLatin1Char('/'), QLatin1Char('.'))
                               .toStdString(),
                           DType::F32,
                           {4, 4},
                           64,
                           "fixture"});
        ListingSource source(infos);
        TensorBrowser browser;
        browser.resize(260, 400);
        browser.setSource(&source);
        browser.show();
        QVERIFY(QTest::qWaitForWindowExposed(&browser));
        QTreeView* view = browser.view();
        view->setColumnWidth(TensorTreeModel::NameColumn, 170);
        QVERIFY(qobject_cast<NameElisionDelegate*>(view->itemDelegateForColumn(TensorTreeModel::NameColumn)));
        const QModelIndex backbone = view->model()->index(0, 0);
        QCOMPARE(view->model()->rowCount(backbone), kAlikeNames.size());
        QSet<QString> shown;
        for (int r = 0; r < view->model()->rowCount(backbone); ++r) {
            const QModelIndex i = view->model()->index(r, TensorTreeModel::NameColumn, backbone);
            QStyleOptionViewItem option;
            option.initFrom(view);
            const QString label = i.data().toString();
            const auto* delegate = qobject_cast<NameElisionDelegate*>(view->itemDelegateForColumn(0));
            const QString s = delegate->shownText(i, option, view->visualRect(i).width());
            QVERIFY2(s != label, qPrintable(s)); // narrow enough to need shortening
            QVERIFY2(s.endsWith(QStringLiteral(".weight")), qPrintable(s));
            shown.insert(s);
            const QString full = i.data(TensorTreeModel::TensorNameRole).toString();
            QVERIFY(i.data(Qt::ToolTipRole).toString().contains(full.toHtmlEscaped()));
        }
        QCOMPARE(shown.size(), kAlikeNames.size());
    }

    // A result table's filter box: typing keeps the rows whose name holds the text, in any case;
    // clearing it brings every row back; the figures stay beside their names.
    void resultTableFilter() {
        QStandardItemModel model(0, 2);
        for (int k = 0; k < kAlikeNames.size(); ++k)
            model.appendRow({new QStandardItem(kAlikeNames[k]), new QStandardItem(QString::number(k))});
        model.appendRow(
            {new QStandardItem(QStringLiteral("lm_head.weight")), new QStandardItem(QStringLiteral("9"))});
        QTableView view;
        styleResultTable(&view);
        QLineEdit* box = filterResultRows(&view, &model, 0);
        QVERIFY(box);
        QVERIFY(view.model() != &model);
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(view.model()->rowCount(), kAlikeNames.size() + 1);
        QTest::keyClicks(box, QStringLiteral("ELSE_branch"));
        QCOMPARE(view.model()->rowCount(), 1);
        QCOMPARE(view.model()->index(0, 0).data().toString(), kAlikeNames[3]);
        QCOMPARE(view.model()->index(0, 1).data().toString(), QStringLiteral("3"));
        QCOMPARE(sourceRow(view.model()->index(0, 1)), 3); // the page's own row
        box->clear();
        QTest::keyClicks(box, QStringLiteral("head"));
        QCOMPARE(view.model()->rowCount(), 1);
        QCOMPARE(view.model()->index(0, 1).data().toString(), QStringLiteral("9"));
        QTest::keyClicks(box, QStringLiteral("zzz"));
        QCOMPARE(view.model()->rowCount(), 0);
        box->clear();
        QCOMPARE(view.model()->rowCount(), kAlikeNames.size() + 1);
        model.appendRow(
            {new QStandardItem(QStringLiteral("late.weight")), new QStandardItem(QStringLiteral("7"))});
        QCOMPARE(view.model()->rowCount(), kAlikeNames.size() + 2); // rows added later show up
        view.sortByColumn(1, Qt::DescendingOrder);                  // sorting is the model's own
        QCOMPARE(model.item(0, 1)->text(), QStringLiteral("9"));
        QCOMPARE(view.model()->index(0, 1).data().toString(), QStringLiteral("9"));
    }
};

QTEST_MAIN(TestWidgetsBrowser)
#include "tst_widgets_browser.moc"
