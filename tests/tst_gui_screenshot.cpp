// Renders the main window with results for the bundled sample model (or a fixture of our own when
// the sample is missing) to <build>/screenshots/quantlens_sample.png, so anyone can look at it.
#include "gui/mainwindow.h"
#include "io/safetensors_writer.h"
#include "widgets/configpanel.h"
#include "widgets/tensorbrowser.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace ql;

class TestGuiScreenshot : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void sampleModelWithResults() {
        QString file = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");
        QTemporaryDir dir;
        if (!QFileInfo::exists(file)) {
            std::vector<float> v(96 * 64);
            for (std::size_t i = 0; i < v.size(); ++i)
                v[i] = static_cast<float>(std::sin(0.37 * i) * (1 + i % 7));
            file = dir.filePath(QStringLiteral("fixture.safetensors"));
            writeSafetensors(file.toStdString(), {{"layer.weight", Tensor::fromFloats({96, 64}, v)}});
        }
        MainWindow window;
        window.show();
        QVERIFY(window.openFile(file));
        const std::string tensor = window.browser()->firstTensorOfRank(2);
        QVERIFY(!tensor.empty());
        QVERIFY(window.selectTensor(QString::fromStdString(tensor)));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.quantizeSelected();
        QVERIFY(shown.wait(60000));
        QTest::qWait(50);

        const QString out = QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_sample.png");
        QVERIFY(QDir().mkpath(QFileInfo(out).absolutePath()));
        const QImage image = window.grab().toImage();
        QVERIFY(image.save(out));
        QVERIFY(QFileInfo(out).size() > 10000);
        // Not a blank window: the plots put many distinct colours on it.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 50, qPrintable(QStringLiteral("only %1 colours").arg(colours.size())));
        qInfo("screenshot: %s", qPrintable(out));
        window.tabs()->setCurrentIndex(1); // timing
        QTest::qWait(50);
        QVERIFY(window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_timing.png")));

        // The same tensor compared against TensorRT's arithmetic, with the A-vs-B page in front,
        // and the whole-model table: the pages the first picture cannot show at once.
        const int b = window.config()->compareBox()->findData(QStringLiteral("preset:tensorrt"));
        QVERIFY(b >= 0);
        window.config()->compareBox()->setCurrentIndex(b);
        window.quantizeSelected();
        QVERIFY(shown.wait(60000));
        window.tabs()->setCurrentIndex(2);
        QTest::qWait(50);
        QVERIFY(
            window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_compare.png")));
        QSignalSpy model(&window, &MainWindow::modelShown);
        window.quantizeAll();
        QVERIFY(model.wait(120000));
        QTest::qWait(50);
        QVERIFY(window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_model.png")));
    }

    // torch against aclnnQuantize on values that sit on x.5 steps: the A-vs-B page must show the
    // mismatches, where they are, and name reciprocal-vs-division as the cause.
    void reciprocalVersusDivisionOnScreen() {
        const float s = 1.0f / 127.0f;
        std::vector<float> v(64 * 256);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>((static_cast<double>(i * 37 % 253) - 126.5) * static_cast<double>(s));
        v[0] = 1.0f; // amax 1: the calibrated scale is fl32(1/127)
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("ties.safetensors"));
        writeSafetensors(file.toStdString(), {{"layers.0.weight", Tensor::fromFloats({64, 256}, v)}});
        MainWindow window;
        window.show();
        QVERIFY(window.openFile(file));
        QVERIFY(window.selectTensor(QStringLiteral("layers.0.weight")));
        const int b = window.config()->compareBox()->findData(QStringLiteral("preset:aclnn-quantize"));
        QVERIFY(b >= 0);
        window.config()->compareBox()->setCurrentIndex(b);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.quantizeSelected();
        QVERIFY(shown.wait(60000));
        window.tabs()->setCurrentIndex(2);
        QTest::qWait(50);
        QString text;
        for (const QLabel* l : window.tabs()->currentWidget()->findChildren<QLabel*>())
            text += l->text();
        QVERIFY2(text.contains(QStringLiteral("codes differ")) && text.contains(QStringLiteral("reciprocal")),
                 qPrintable(text));
        QVERIFY(
            window.grab().save(QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_mismatch.png")));
    }
};

QTEST_MAIN(TestGuiScreenshot)
#include "tst_gui_screenshot.moc"
