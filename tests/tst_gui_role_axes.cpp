// The window's single-tensor run plans a weight as Quantize all, the CLI and Python do: until the user
// picks an axis, through its role (quant/weight_view.h planForRole), with the role's axis shown in the
// configuration and the plan's notes (a conv [O, I, kh, kw] viewed as [O, I*kh*kw]) in its details
// line; a picked axis applies as given; another tensor or model never keeps an axis nobody picked.
// Runs on the bundled sample, a conv net: conv2d_0.w_0 [8, 3, 3, 3], conv2d_1.w_0 [8, 8, 1, 1].
// A picture of the panel for the conv goes to <build>/screenshots/config_panel_conv_role.png.
#include "gui/main_window.h"
#include "quantlens/config.h"
#include "widgets/config_panel.h"
#include "widgets/headline_strip.h"
#include "widgets/model_table_page.h"
#include "widgets/tensor_view.h"

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace ql;

namespace {

const QString kSample = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");

void chooseData(QComboBox* box, const QVariant& data) {
    const int i = box->findData(data);
    QVERIFY2(i >= 0, qPrintable(data.toString()));
    box->setCurrentIndex(i);
}

/// An axis picked as a user picks it: the index changes, then the box says it was activated.
void pickAxis(ConfigPanel* c, int axis) {
    const int i = c->axisBox()->findData(axis);
    QVERIFY2(i >= 0, qPrintable(QString::number(axis)));
    c->axisBox()->setCurrentIndex(i);
    emit c->axisBox()->activated(i);
}

/// Runs Quantize selected; null (with the window's error said) when it does not finish.
std::shared_ptr<const TensorOutcome> runSelected(MainWindow& w) {
    QSignalSpy shown(w.tensorView(), &TensorView::shown);
    w.quantizeSelected();
    if (!shown.wait(30000)) {
        qWarning("%s", qPrintable(w.errorText()));
        return nullptr;
    }
    return w.tensorView()->outcome();
}

QString detailsOf(const MainWindow& w) {
    return w.config()->detailsLabel()->text();
}

} // namespace

class TestGuiRoleAxes : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // With no axis picked, a conv run alone takes the plan Quantize all takes: ascend-quant's scale
    // axis must be one of the last two, so [8, 3, 3, 3] is viewed as [8, 27] with a scale per output
    // channel; MX on a 1x1 conv blocks its 8 input channels, not the 1-element last axis. The panel
    // shows that plan before the run, and the run's codes and scales are Quantize all's.
    void singleRunPlansThroughTheRole() {
        struct Case {
            const char* tensor;
            Preset preset;
            int axis;            // the role's axis, shown in the box
            std::int64_t scales; // one per output channel
            const char* view;    // how the plan views it ("" as it is)
        };
        const Case cases[] = {{"conv2d_0.w_0", Preset::AscendQuant, 0, 8, "as [8, 27]"},
                              {"conv2d_1.w_0", Preset::MX, 1, 8, ""}};
        for (const Case& k : cases) {
            const QString which =
                QStringLiteral("%1 under %2")
                    .arg(QLatin1String(k.tensor), QString::fromStdString(std::string(nameOf(k.preset))));
            MainWindow w;
            w.resize(1440, 900);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QVERIFY(w.openFile(kSample));
            QVERIFY(w.selectTensor(QLatin1String(k.tensor)));
            ConfigPanel* c = w.config();
            chooseData(c->presetBox(), static_cast<int>(k.preset));
            QVERIFY2(!c->axisChosen(), qPrintable(which));
            QVERIFY2(c->plan().has_value() && c->problem().isEmpty(),
                     qPrintable(which + QStringLiteral(": ") + c->problem()));
            QCOMPARE(c->axisBox()->currentData().toInt(), k.axis);
            QCOMPARE(c->plan()->scaleCount, k.scales);
            QCOMPARE(c->plan()->viewed(), *k.view != '\0');
            const QString details = detailsOf(w);
            QVERIFY2(details.contains(QLatin1String(k.view)), qPrintable(details));
            QVERIFY2(details.contains(QStringLiteral("Axes from its role")), qPrintable(details));
            if (k.preset == Preset::AscendQuant) {
                QTest::qWait(50); // the panel lays out its new lines
                QVERIFY(QDir().mkpath(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots")));
                QVERIFY(c->grab().save(
                    QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/config_panel_conv_role.png")));
                QVERIFY(w.grab().save(
                    QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/config_panel_conv_role_window.png")));
            }

            const auto single = runSelected(w);
            QVERIFY2(single, qPrintable(which));
            const TensorReport& r = single->a.report;
            QCOMPARE(r.name, std::string(k.tensor));
            QVERIFY2(r.quantized(), r.error.c_str());
            QCOMPARE(r.plan.scaleCount, k.scales);
            QCOMPARE(r.plan.spec, c->plan()->spec); // the plan the panel showed
            QCOMPARE(r.plan.scaleShape, c->plan()->scaleShape);
            QVERIFY2(QString::fromStdString(r.plan.notes).contains(QLatin1String(k.view)),
                     r.plan.notes.c_str());
            QVERIFY2(!w.headline()->isStale(), qPrintable(which)); // the panel still says what ran

            QSignalSpy all(w.modelTable(), &ModelTablePage::shown);
            w.quantizeAll();
            QVERIFY2(all.wait(60000), qPrintable(w.errorText()));
            const auto& quantized = w.modelTable()->outcome()->quantized;
            const auto it = std::find_if(quantized.begin(), quantized.end(),
                                         [&](const QuantizedTensor& q) { return q.name == k.tensor; });
            QVERIFY2(it != quantized.end(),
                     qPrintable(which + QStringLiteral(": not quantized by Quantize all")));
            QCOMPARE(it->plan.spec, r.plan.spec);
            QCOMPARE(it->plan.scaleShape, r.plan.scaleShape);
            QCOMPARE(it->plan.tensorShape, r.plan.tensorShape);
            QCOMPARE(it->params.scales, r.params.scales);
            QVERIFY2(it->codes == single->a.codes, qPrintable(which + QStringLiteral(": codes differ")));
        }
    }

    // An axis the user picks applies as given, to the next tensor of the model too; opening the model
    // again, or an axis moved without a pick, leaves the role's axis in charge.
    void aPickedAxisAppliesAsGiven() {
        MainWindow w;
        QVERIFY(w.openFile(kSample));
        QVERIFY(w.selectTensor(QStringLiteral("conv2d_0.w_0")));
        ConfigPanel* c = w.config();
        chooseData(c->presetBox(), static_cast<int>(Preset::AscendQuant));
        QVERIFY2(c->plan() && c->plan()->viewed(), qPrintable(c->problem())); // the role's plan first

        pickAxis(c, 3); // the kernel's width: one scale per column, as aclnnAscendQuantV3 broadcasts
        QVERIFY(c->axisChosen());
        QVERIFY2(c->plan().has_value(), qPrintable(c->problem()));
        QVERIFY(!c->plan()->viewed());
        QCOMPARE(c->plan()->scaleCount, std::int64_t{3});
        QVERIFY2(!detailsOf(w).contains(QStringLiteral("Axes from its role")), qPrintable(detailsOf(w)));
        const auto picked = runSelected(w);
        QVERIFY(picked);
        QCOMPARE(picked->a.report.plan.spec.axes, std::vector<int>{3});
        QCOMPARE(picked->a.report.plan.scaleCount, std::int64_t{3});
        QVERIFY(!picked->a.report.plan.viewed());

        // Axis 0 picked: ascend-quant's rule refuses it, and says so, not a view in its place.
        pickAxis(c, 0);
        QVERIFY(!c->plan().has_value());
        QVERIFY2(c->problem().contains(QStringLiteral("last two dimensions")), qPrintable(c->problem()));

        // The pick holds for the model's next tensor: the depthwise [32, 1, 3, 3] along its width.
        pickAxis(c, 3);
        QVERIFY(w.selectTensor(QStringLiteral("conv2d_10.w_0")));
        QVERIFY(c->axisChosen());
        QCOMPARE(c->axisBox()->currentData().toInt(), 3);
        QVERIFY2(c->plan() && !c->plan()->viewed(), qPrintable(c->problem()));

        // A model opened again forgets it: the role's axis and plan are back.
        QVERIFY(w.openFile(kSample));
        QVERIFY(!c->axisChosen());
        QVERIFY(w.selectTensor(QStringLiteral("conv2d_0.w_0")));
        QCOMPARE(c->axisBox()->currentData().toInt(), 0);
        QVERIFY2(c->plan() && c->plan()->viewed(), qPrintable(c->problem()));

        // An axis left in the box by something other than a pick is not kept for another tensor:
        // MX on the 1x1 conv blocks its input channels, never the 1-element last axis.
        chooseData(c->presetBox(), static_cast<int>(Preset::MX));
        c->axisBox()->setCurrentIndex(c->axisBox()->findData(3));
        QVERIFY(w.selectTensor(QStringLiteral("conv2d_1.w_0")));
        QVERIFY(!c->axisChosen());
        QCOMPARE(c->axisBox()->currentData().toInt(), 1);
        QVERIFY2(c->plan().has_value(), qPrintable(c->problem()));
        const auto mx = runSelected(w);
        QVERIFY(mx);
        QCOMPARE(mx->a.report.plan.spec.axes, std::vector<int>{1});
    }
};

QTEST_MAIN(TestGuiRoleAxes)
#include "tst_gui_role_axes.moc"
