// The result pages as people expect them: a log axis on the values plot shows a lone
// outlier beside the bulk, a group's bar tells its figures on hover and is selected by a click, plot
// ranges never carry over from the last tensor, titles of alike names read apart, and the banners
// stay small and can be closed. Screenshots of the pages at 1280×800 are written where
// QUANTLENS_SCREENSHOT_DIR names a folder.
#include "io/safetensors_writer.h"
#include "job_test_util.h"
#include "widgets/banner.h"
#include "widgets/clipping_page.h"
#include "widgets/config_panel.h"
#include "widgets/headline_strip.h"
#include "widgets/histogram_pages.h"
#include "widgets/qcp.h"
#include "widgets/tensor_browser.h"
#include "widgets/timing_page.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

using namespace ql;

namespace {

QuantSpec int8PerChannel() {
    QuantSpec s;
    s.preset = Preset::TensorRT;
    s.target = Target::Int8;
    s.scheme = Scheme::PerChannel;
    s.axes = {0};
    s.calibration.method = CalibMethod::AbsMax;
    return s;
}

// A bell of values (a sum of sines, deterministic) with `outliers` at ±30 and `nans` NaNs.
Tensor bell(const Shape& shape, int outliers, int nans = 0) {
    const auto n = static_cast<std::size_t>(elementCount(shape));
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i);
        v[i] = static_cast<float>(std::sin(t * 0.37) * std::sin(t * 0.011) + 0.5 * std::sin(t * 1.3));
    }
    for (int k = 0; k < outliers; ++k)
        v[(static_cast<std::size_t>(k) * 7919 + 11) % n] = k % 2 ? -30.0f : 30.0f;
    for (int k = 0; k < nans; ++k)
        v[(static_cast<std::size_t>(k) * 104729 + 5) % n] = std::nanf("");
    return Tensor::fromFloats(shape, v);
}

void moveTo(QCustomPlot* plot, QPoint at) {
    QMouseEvent move(QEvent::MouseMove, QPointF(at), QPointF(plot->mapToGlobal(at)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(plot, &move);
}

// The pixel row of a count on a plot's y axis, measured from the axis's bottom.
double heightOf(QCustomPlot* plot, double count) {
    return plot->yAxis->coordToPixel(plot->yAxis->range().lower) - plot->yAxis->coordToPixel(count);
}

void save(QWidget* w, const char* name) {
    QTest::qWait(50); // the layout a change asked for, as the event loop would give it
    const QString dir = qEnvironmentVariable("QUANTLENS_SCREENSHOT_DIR");
    const QPixmap shot = w->grab();
    QVERIFY(!shot.isNull());
    if (!dir.isEmpty()) QVERIFY(shot.save(dir + QLatin1Char('/') + QLatin1String(name)));
}

} // namespace

class TestWidgetsPlots : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_model = m_dir.filePath(QStringLiteral("model.safetensors")).toStdString();
        writeSafetensors(m_model,
                         {{"wide.weight", bell({256, 256}, 4)},
                          {"flat.weight", Tensor::fromFloats({8, 16}, std::vector<float>(128, 0.25f))},
                          {"nan.weight", bell({32, 64}, 0, 3)}});
        m_request = qltest::jobRequest(m_model, int8PerChannel());
        m_wide = runTensorJob(m_request, "wide.weight");
        m_nan = runTensorJob(m_request, "nan.weight");
    }

    // 65536 values near 0 and one at +30: on a linear axis its bin is under a pixel high, on the log
    // axis it stands clear of the axis.
    void valuesLogScaleShowsOutliers() {
        ValueHistogramPage page;
        page.resize(640, 420);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setPreview(previewValues(*m_request.source, "wide.weight"));
        QCustomPlot* plot = page.plots().front();
        QVERIFY(!page.logToggle()->isChecked());
        QCOMPARE(plot->xAxis->range().upper >= 30, true); // the outlier is in range...
        QVERIFY2(heightOf(plot, 1) < 1.0, qPrintable(QString::number(heightOf(plot, 1)))); // ...but flat
        page.logToggle()->setChecked(true);
        QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY2(heightOf(plot, 1) >= 8.0, qPrintable(QString::number(heightOf(plot, 1))));
        // The bin holding +30 is drawn (a log axis leaves out only the empty bins).
        const auto* data = plot->graph(0)->data().data();
        bool outlierDrawn = false;
        for (auto it = data->constBegin(); it != data->constEnd(); ++it)
            outlierDrawn = outlierDrawn || (it->key > 29 && it->value >= 1);
        QVERIFY(outlierDrawn);
        // After a run too, and back to linear.
        page.setOutcome(m_wide);
        QVERIFY(heightOf(plot, 1) >= 8.0);
        page.logToggle()->setChecked(false);
        QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLinear);
        QCOMPARE(plot->yAxis->range().lower, 0.0);
        save(&page, "values_log.png");
    }

    // Nothing on screen after clear (a new file opened) frames the last tensor's range: every page's
    // axes are those of a page that never showed anything, and the next tensor's are its own.
    void rangesResetForNewTensor() {
        ValueHistogramPage values, freshValues;
        ErrorHistogramPage errors, freshErrors;
        ClippingPage clipping, freshClipping;
        values.setPreview(previewValues(*m_request.source, "wide.weight"));
        values.setOutcome(m_wide);
        errors.setOutcome(m_wide);
        clipping.setOutcome(m_wide);
        auto ranges = [](const PlotPage& p) {
            QList<QCPRange> r;
            for (QCustomPlot* plot : p.plots())
                r << plot->xAxis->range() << plot->yAxis->range();
            return r;
        };
        QVERIFY(ranges(clipping) != ranges(freshClipping)); // the wide tensor's 256 groups
        for (PlotPage* p : std::initializer_list<PlotPage*>{&values, &errors, &clipping})
            p->clear(QStringLiteral("Select a tensor and run (Ctrl+R)."));
        QCOMPARE(ranges(values), ranges(freshValues));
        QCOMPARE(ranges(errors), ranges(freshErrors));
        QCOMPARE(ranges(clipping), ranges(freshClipping));
        // A constant tensor's values span no width: its range is its own, not the last one's width.
        const ValuePreview flat = previewValues(*m_request.source, "flat.weight");
        values.setPreview(previewValues(*m_request.source, "wide.weight"));
        values.setPreview(flat);
        freshValues.setPreview(flat);
        QCOMPARE(ranges(values), ranges(freshValues));
        QVERIFY(values.plots().front()->xAxis->range().contains(0.25));
    }

    // Pointing at a group's bar tells its figures (as core measured them); a click selects it.
    void clippingGroupHoverAndClick() {
        ClippingPage page;
        page.resize(1280, 500);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setOutcome(m_wide);
        QCustomPlot* bars = page.plots()[0];
        QCustomPlot* sqnr = page.plots()[1];
        const GroupClipping& g = m_wide.a.report.analysis.clipping.groups()[37];
        const QPoint at(static_cast<int>(bars->xAxis->coordToPixel(37)), bars->axisRect()->center().y());
        moveTo(bars, at);
        const QString text = page.hoverText();
        QVERIFY2(text.startsWith(QStringLiteral("Group 37: 256 elements")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("SQNR %1 dB").arg(QString::number(g.sqnrDb(), 'g', 4))),
                 qPrintable(text));
        moveTo(sqnr,
               QPoint(static_cast<int>(sqnr->xAxis->coordToPixel(200)), sqnr->axisRect()->center().y()));
        QVERIFY2(page.hoverText().startsWith(QStringLiteral("Group 200:")), qPrintable(page.hoverText()));
        moveTo(bars, QPoint(2, 2)); // off the axes: nothing
        QVERIFY(page.hoverText().isEmpty());

        QSignalSpy selected(&page, &ClippingPage::groupSelected);
        QTest::mouseClick(bars, Qt::LeftButton, {}, at);
        QCOMPARE(page.selectedBar(), 37);
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.front().at(0).toLongLong(), 37);
        QCOMPARE(selected.front().at(1).toLongLong(), 1);
        QVERIFY2(page.note()->text().contains(QStringLiteral("Selected: Group 37")),
                 qPrintable(page.note()->text()));
        save(&page, "clipping_selected.png");
        page.clear(QStringLiteral("cleared"));
        QCOMPARE(page.selectedBar(), -1);
    }

    // Two tensors whose names differ in one middle part: their plot titles read apart at any width.
    void titlesOfAlikeNamesStayApart() {
        const QString a = QStringLiteral("model_weights/If_1_then_branch_param_conv/weight");
        const QString b = QStringLiteral("model_weights/If_2_then_branch_param_conv/weight");
        ValueHistogramPage pa, pb;
        for (ValueHistogramPage* p : {&pa, &pb}) {
            p->resize(330, 300);
            p->show();
            QVERIFY(QTest::qWaitForWindowExposed(p));
        }
        ValuePreview preview = previewValues(*m_request.source, "wide.weight");
        preview.tensor = a.toStdString();
        pa.setPreview(preview);
        preview.tensor = b.toStdString();
        pb.setPreview(preview);
        const QString ta = PlotPage::titleText(pa.plots().front());
        const QString tb = PlotPage::titleText(pb.plots().front());
        QVERIFY2(ta != tb, qPrintable(ta));
        QVERIFY2(ta.startsWith(QStringLiteral("Values of ")) && ta.contains(QStringLiteral("/weight")),
                 qPrintable(ta));
        QVERIFY2(ta.size() < a.size() + 30, qPrintable(ta)); // it was shortened
    }

    // In an 800×600 window the banners keep to two lines each, however long their news; each can
    // be closed, and comes back with the next news.
    void bannersStaySmallAndClose() {
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* strip = new HeadlineStrip(&window);
        layout->addWidget(strip);
        layout->addWidget(new QWidget(&window), 1);
        window.resize(800, 600);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        strip->setOutcome(m_nan);
        Banner* nonFinite = strip->nonFiniteBanner();
        QCOMPARE(m_nan.a.report.analysis.stats.nanCount(), std::int64_t{3});
        QVERIFY2(nonFinite->isVisible(), qPrintable(nonFinite->message()));
        QVERIFY2(nonFinite->message().contains(QStringLiteral("NaN")), qPrintable(nonFinite->message()));
        QString why;
        for (int i = 0; i < 12; ++i)
            why += QStringLiteral("the spec, the backend and the comparison of run %1 changed; ").arg(i);
        strip->setStale(why);
        Banner* stale = strip->staleBanner();
        QTRY_VERIFY(stale->isVisible());
        QCoreApplication::processEvents();
        const int line = stale->fontMetrics().lineSpacing();
        QVERIFY2(stale->height() <= 3 * line + 8, qPrintable(QString::number(stale->height())));
        QVERIFY2(strip->height() <= 600 / 4, qPrintable(QString::number(strip->height())));
        QVERIFY(stale->shownText().endsWith(QStringLiteral("…")));
        QVERIFY(stale->toolTip().contains(QStringLiteral("run 11 changed")));
        save(&window, "banners_800x600.png");

        QTest::mouseClick(stale->closeButton(), Qt::LeftButton);
        QVERIFY(!stale->isVisible());
        QVERIFY(stale->isDismissed());
        QVERIFY(strip->isStale()); // closing the banner does not make the figures current
        strip->setStale(why);      // the same news: stays closed
        QVERIFY(!stale->isVisible());
        strip->setStale(QStringLiteral("the spec changed since this run."));
        QVERIFY(stale->isVisible());
        QTest::mouseClick(nonFinite->closeButton(), Qt::LeftButton);
        QVERIFY(!nonFinite->isVisible());
        strip->setOutcome(m_nan); // a new run: its news shows again
        QVERIFY(nonFinite->isVisible());
        QVERIFY(!strip->isStale());
    }

    // The Timing tab says what each phase measures in one line above its bars, whatever the run.
    void timingSaysWhatPhasesAre() {
        TimingPage page;
        page.resize(1280, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setOutcome(m_wide);
        const QLabel* line = page.phasesLine();
        QVERIFY(line->isVisible());
        for (const char* phase : {"calibration:", "upload:", "kernel:", "download:", "total:"})
            QVERIFY2(line->text().contains(QLatin1String(phase)), qPrintable(line->text()));
        QVERIFY(!line->text().contains(QLatin1Char('\n')));
        QVERIFY2(line->fontMetrics().horizontalAdvance(line->text()) <= line->contentsRect().width(),
                 "one line at 1280 pixels");
        QVERIFY(line->geometry().bottom() < page.plots()[0]->geometry().top()); // read before the bars
        QVERIFY(line->toolTip().contains(QStringLiteral("cpu-reference")));     // a tiny tensor's timings
        save(&page, "timing_1280x800.png");
        page.clear(QStringLiteral("nothing yet"));
        QVERIFY(line->isVisible()); // it explains the page, not one run
    }

    // ascend-quant's scale is what aclnnAscendQuantV3 multiplies by: the panel says so in plain words
    // (core's preset note), so 1/scale beside torch's scale is no surprise.
    void ascendQuantSaysItsScaleIsTheInverse() {
        ConfigPanel panel(m_request.registry);
        panel.setShape({16, 32});
        QuantSpec spec = int8PerChannel();
        spec.preset = Preset::AscendQuant;
        panel.setSpec(spec);
        QVERIFY2(panel.plan().has_value(), qPrintable(panel.problem()));
        const QString details = panel.detailsLabel()->text();
        QVERIFY2(details.contains(QStringLiteral("multiplies by the scale it is given: 1/scale")),
                 qPrintable(details));
        spec.preset = Preset::Torch; // torch's own scale is the step: no such note
        panel.setSpec(spec);
        QVERIFY(!panel.detailsLabel()->text().contains(QStringLiteral("1/scale")));
    }

    // A percentile clips the wide tensor's outlier at +30: its error lies beyond the error bins (they
    // span the largest rounding error) and its value beyond every group's grid; both notes say so.
    void clippedElementsAreSaidNotDrawn() {
        JobRequest clipping = m_request;
        clipping.spec.calibration = {CalibMethod::Percentile, 99.0};
        const TensorOutcome o = runTensorJob(clipping, "wide.weight");
        const TensorAnalysis& a = o.a.report.analysis;
        QVERIFY(a.error.underflow() + a.error.overflow() > 0);
        QWidget window;
        auto* columns = new QHBoxLayout(&window);
        auto* values = new ValueHistogramPage(&window);
        auto* errors = new ErrorHistogramPage(&window);
        columns->addWidget(values);
        columns->addWidget(errors);
        window.resize(1280, 500);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        values->setOutcome(o);
        errors->setOutcome(o);
        const QString beyond = QString::number(a.error.underflow() + a.error.overflow());
        QVERIFY2(errors->note()->text().contains(QStringLiteral(" %1 clipped errors beyond ±").arg(beyond)),
                 qPrintable(errors->note()->text()));
        QVERIFY2(values->note()->text().contains(QStringLiteral("beyond every group's range (clipped)")),
                 qPrintable(values->note()->text()));
        const Histogram& unclipped = m_wide.a.report.analysis.error; // absmax clips nothing
        QCOMPARE(unclipped.underflow() + unclipped.overflow(), 0);
        QVERIFY(!errors->note()->text().isEmpty());
        save(&window, "errors_clipped.png");
    }

    // The pages together as the window lays them out, at 1280×800, for a person to look at.
    void screenshot1280x800() {
        QWidget window;
        auto* rows = new QVBoxLayout(&window);
        auto* strip = new HeadlineStrip(&window);
        auto* browser = new TensorBrowser(&window);
        auto* values = new ValueHistogramPage(&window);
        auto* errors = new ErrorHistogramPage(&window);
        auto* clipping = new ClippingPage(&window);
        auto* columns = new QHBoxLayout;
        auto* pages = new QVBoxLayout;
        auto* top = new QSplitter(Qt::Horizontal, &window);
        top->addWidget(values);
        top->addWidget(errors);
        pages->addWidget(strip);
        pages->addWidget(top, 3);
        pages->addWidget(clipping, 2);
        columns->addWidget(browser);
        columns->addLayout(pages, 1);
        rows->addLayout(columns);
        browser->setFixedWidth(300);
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        browser->setSource(m_request.source.get());
        browser->selectTensor("nan.weight");
        values->logToggle()->setChecked(true);
        for (PlotPage* p : std::initializer_list<PlotPage*>{values, errors, clipping})
            p->setOutcome(m_nan);
        strip->setOutcome(m_nan);
        strip->setStale(QStringLiteral("the spec changed since this run."));
        QCustomPlot* bars = clipping->plots()[0];
        QTest::mouseClick(
            bars, Qt::LeftButton, {},
            QPoint(static_cast<int>(bars->xAxis->coordToPixel(5)), bars->axisRect()->center().y()));
        QCOMPARE(clipping->selectedBar(), 5);
        save(&window, "pages_1280x800.png");
    }

private:
    QTemporaryDir m_dir;
    std::string m_model;
    JobRequest m_request;
    TensorOutcome m_wide, m_nan;
};

QTEST_MAIN(TestWidgetsPlots)
#include "tst_widgets_plots.moc"
