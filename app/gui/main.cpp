// quantlens [FILE] [--screenshot OUT.png]
// With --screenshot: opens FILE, selects its first 2-D tensor, runs, waits for the result, saves
// the main window to OUT.png and exits (0 on success) — for scripts/run.sh and CI.
#include "gui/main_window.h"
#include "io/atomic_file.h"
#include "quantlens/config.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTimer>
#include <cstdio>

namespace {

int screenshot(ql::MainWindow& window, const QString& file, const QString& out) {
    if (file.isEmpty()) {
        std::fprintf(stderr, "quantlens: --screenshot needs a FILE to open\n");
        return 2;
    }
    if (!window.openFile(file)) {
        std::fprintf(stderr, "quantlens: %s\n", qPrintable(window.errorText()));
        return 1;
    }
    std::string tensor = window.browser()->firstTensorOfRank(2);
    for (int rank = 3; tensor.empty() && rank <= 5; ++rank)
        tensor = window.browser()->firstTensorOfRank(rank);
    if (tensor.empty()) tensor = window.browser()->firstTensorOfRank(1);
    if (tensor.empty() || !window.selectTensor(QString::fromStdString(tensor))) {
        std::fprintf(stderr, "quantlens: %s has no floating tensor to quantize\n", qPrintable(file));
        return 1;
    }
    QObject::connect(window.tensorView(), &ql::TensorView::shown, &window, [&window, out] {
        // One more turn of the event loop so layouts and replots settle before grabbing.
        QTimer::singleShot(50, &window, [&window, out] {
            const bool ok = window.grab().save(out);
            if (!ok) std::fprintf(stderr, "quantlens: could not write %s\n", qPrintable(out));
            QCoreApplication::exit(ok ? 0 : 1);
        });
    });
    QObject::connect(&window, &ql::MainWindow::jobEnded, &window, [](const QString& why) {
        std::fprintf(stderr, "quantlens: %s\n", qPrintable(why));
        QCoreApplication::exit(1);
    });
    QTimer::singleShot(10 * 60 * 1000, &window, [] {
        std::fprintf(stderr, "quantlens: no result after 10 minutes\n");
        QCoreApplication::exit(1);
    });
    window.quantizeSelected();
    return QApplication::exec();
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    ql::removeTemporariesOnSignals(); // a killed export leaves no temporary behind
    QApplication::setOrganizationName(QStringLiteral("QuantLens"));
    QApplication::setApplicationName(QStringLiteral("quantlens"));
    QApplication::setApplicationVersion(QStringLiteral(QUANTLENS_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("See what quantization does to model weights."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Model file to open (safetensors, "
                                                                        "sharded index, GGUF, ONNX, HDF5)"));
    const QCommandLineOption shot(
        QStringLiteral("screenshot"),
        QStringLiteral("Open FILE, run its first 2-D tensor, save the window to OUT.png, exit"),
        QStringLiteral("OUT.png"));
    parser.addOption(shot);
    parser.process(app);
    const QStringList args = parser.positionalArguments();
    const QString file = args.isEmpty() ? QString() : args.first();

    ql::MainWindow window;
    window.show();
    if (parser.isSet(shot)) return screenshot(window, file, parser.value(shot));

    if (!file.isEmpty()) {
        window.openFile(file);
    } else {
        const QByteArray last = QSettings().value(QStringLiteral("lastSession")).toByteArray();
        if (!last.isEmpty()) {
            try {
                window.applySession(ql::Session::fromJson(last));
            } catch (const std::exception&) {
                // A session from an older build that no longer parses: start empty.
            }
        }
    }
    return QApplication::exec();
}
