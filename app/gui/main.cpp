// quantlens [FILE] [--screenshot OUT.png [--size WxH]]
// With --screenshot: opens FILE, selects its first 2-D tensor, runs, waits for the result, saves
// the main window, WxH pixels (1440x900 unless --size says), to OUT.png and exits (0 on success) —
// for scripts/run.sh and CI. --help and --version answer without a display.
#include "gui/main_window.h"
#include "io/atomic_file.h"
#include "quantlens/config.h"
#include "widgets/tensor_browser.h"
#include "widgets/tensor_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QRegularExpression>
#include <QSettings>
#include <QSize>
#include <QTimer>
#include <cstdio>
#include <cstring>

namespace {

void nameApplication() {
    QCoreApplication::setOrganizationName(QStringLiteral("QuantLens"));
    QCoreApplication::setApplicationName(QStringLiteral("quantlens"));
    QCoreApplication::setApplicationVersion(QStringLiteral(QUANTLENS_VERSION));
}

/// --help and --version print and exit: they need no display, so they are answered before QApplication.
bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        for (const char* flag : {"-h", "--help", "--help-all", "-?", "-v", "--version"})
            if (std::strcmp(argv[i], flag) == 0) return true;
    }
    return false;
}

/// "WxH" with both sides in [200, 10000], or an invalid size.
QSize parseSize(const QString& text) {
    static const QRegularExpression pattern(QStringLiteral("^(\\d{1,5})[xX](\\d{1,5})$"));
    const auto m = pattern.match(text);
    if (!m.hasMatch()) return {};
    const QSize size(m.captured(1).toInt(), m.captured(2).toInt());
    const bool fits =
        size.width() >= 200 && size.height() >= 200 && size.width() <= 10000 && size.height() <= 10000;
    return fits ? size : QSize();
}

int screenshot(ql::MainWindow& window, const QString& file, const QString& out, QSize size) {
    if (file.isEmpty()) {
        std::fprintf(stderr, "quantlens: --screenshot needs a FILE to open\n");
        return 2;
    }
    window.resize(size);
    window.show();
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

class Options {
public:
    Options() {
        parser.setApplicationDescription(QStringLiteral("See what quantization does to model weights."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("FILE"),
                                     QStringLiteral("Model file to open (safetensors, "
                                                    "sharded index, GGUF, ONNX, HDF5)"));
        parser.addOption(shot);
        parser.addOption(size);
    }
    QCommandLineParser parser;
    const QCommandLineOption shot{
        QStringLiteral("screenshot"),
        QStringLiteral("Open FILE, run its first 2-D tensor, save the window to OUT.png, exit"),
        QStringLiteral("OUT.png")};
    const QCommandLineOption size{QStringLiteral("size"),
                                  QStringLiteral("The window's size for --screenshot (default 1440x900)"),
                                  QStringLiteral("WxH"), QStringLiteral("1440x900")};
};

} // namespace

int main(int argc, char** argv) {
    if (asksForHelpOrVersion(argc, argv)) {
        QCoreApplication core(argc, argv);
        nameApplication();
        Options options;
        options.parser.process(core); // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    ql::removeTemporariesOnSignals(); // a killed export leaves no temporary behind
    nameApplication();

    Options options;
    options.parser.process(app);
    const QStringList args = options.parser.positionalArguments();
    const QString file = args.isEmpty() ? QString() : args.first();

    ql::MainWindow window;
    if (options.parser.isSet(options.shot)) {
        const QSize size = parseSize(options.parser.value(options.size));
        if (!size.isValid()) {
            std::fprintf(stderr,
                         "quantlens: --size takes WxH, each side 200 to 10000 pixels (like 1440x900)\n");
            return 2;
        }
        return screenshot(window, file, options.parser.value(options.shot), size);
    }
    window.show();

    // The last session's window, docks and spec, also when a file is given (scripts/run.sh gives one).
    const QByteArray last = QSettings().value(QStringLiteral("lastSession")).toByteArray();
    if (const auto session = ql::startupSession(last, file))
        window.applySession(*session);
    else if (!file.isEmpty())
        window.openFile(file);
    return QApplication::exec();
}
