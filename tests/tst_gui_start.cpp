// How the app starts: --help and --version without a display, --screenshot at a fixed
// size, the last session (window, docks, spec) restored also when a file is given; and what a
// model's file says about it (GGUF keys, ONNX opset and producer) in the Model info dock.
#include "gui/main_window.h"
#include "gui/session.h"
#include "io/printable.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "quantlens/config.h"
#include "widgets/config_panel.h"
#include "widgets/model_info_view.h"
#include "widgets/tensor_browser.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace ql;

namespace {

Tensor ramp(Shape shape, double phase) {
    std::vector<float> v(static_cast<std::size_t>(elementCount(shape)));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(std::sin(phase + 0.37 * static_cast<double>(i)) * 0.5);
    return Tensor::fromFloats(std::move(shape), v);
}

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

/// Runs the built app with `env`, its settings kept in `home`.
Run runApp(const QStringList& args, QProcessEnvironment env, const QString& home) {
    env.insert(QStringLiteral("HOME"), home);
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home);
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(QUANTLENS_APP), args);
    Run r;
    if (!p.waitForFinished(240000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QProcessEnvironment withoutDisplay() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QString());
    return env;
}

QProcessEnvironment offscreen() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    return env;
}

std::string valueOf(const std::vector<ModelInfoEntry>& info, const std::string& key) {
    for (const ModelInfoEntry& e : info)
        if (e.key == key) return e.value;
    return "(missing)";
}

} // namespace

class TestGuiStart : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_file;
    QString m_other;

    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_file = path("first.safetensors");
        writeSafetensors(m_file.toStdString(), {{"layers.0.mlp.weight", ramp({64, 128}, 0.0)},
                                                {"layers.1.attn.weight", ramp({32, 96}, 1.0)}});
        m_other = path("second.safetensors");
        writeSafetensors(m_other.toStdString(), {{"blocks.0.proj.weight", ramp({48, 64}, 2.0)}});
    }

    void helpAndVersionWithoutDisplay() {
        const Run help = runApp({QStringLiteral("--help")}, withoutDisplay(), m_dir.path());
        QVERIFY2(help.exitCode == 0, help.err.constData());
        QVERIFY2(help.out.contains("Usage:") && help.out.contains("--screenshot") &&
                     help.out.contains("--size"),
                 help.out.constData());
        const Run version = runApp({QStringLiteral("--version")}, withoutDisplay(), m_dir.path());
        QVERIFY2(version.exitCode == 0, version.err.constData());
        QVERIFY2(version.out.contains(QUANTLENS_VERSION), version.out.constData());
    }

    void screenshotAtFixedSize_data() {
        QTest::addColumn<QStringList>("sizeArgs");
        QTest::addColumn<QSize>("expected");
        QTest::newRow("default") << QStringList() << QSize(1440, 900);
        QTest::newRow("1280x800") << QStringList{QStringLiteral("--size"), QStringLiteral("1280x800")}
                                  << QSize(1280, 800);
        QTest::newRow("1920x1080") << QStringList{QStringLiteral("--size"), QStringLiteral("1920x1080")}
                                   << QSize(1920, 1080);
    }

    void screenshotAtFixedSize() {
        QFETCH(QStringList, sizeArgs);
        QFETCH(QSize, expected);
        // Kept in the build's screenshots folder, to be looked at.
        const QString png = QStringLiteral(QUANTLENS_BINARY_DIR "/screenshots/quantlens_app_%1x%2.png")
                                .arg(expected.width())
                                .arg(expected.height());
        QDir().mkpath(QFileInfo(png).absolutePath());
        QFile::remove(png);
        const Run r =
            runApp(QStringList{QStringLiteral("--screenshot"), png} + sizeArgs + QStringList{m_file},
                   offscreen(), m_dir.path());
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), expected);
    }

    void badSizeRefused() {
        const Run r = runApp({QStringLiteral("--screenshot"), path("bad.png"), QStringLiteral("--size"),
                              QStringLiteral("wide"), m_file},
                             offscreen(), m_dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("WxH"), r.err.constData());
    }

    void lastSessionRestoredWhenAFileIsGiven() {
        QByteArray last;
        QuantSpec changed;
        {
            MainWindow w;
            QVERIFY(w.openFile(m_file));
            QVERIFY(w.selectTensor(QStringLiteral("layers.1.attn.weight")));
            QComboBox* target = w.config()->targetBox();
            const int fp8 = target->findData(static_cast<int>(Target::Fp8E4M3));
            QVERIFY(fp8 >= 0);
            target->setCurrentIndex(fp8);
            changed = w.config()->spec();
            QCOMPARE(changed.target, Target::Fp8E4M3);
            last = w.session().toJson();
        }
        // Another file on the command line: the spec comes back, the given file is the one open.
        const auto start = startupSession(last, m_other);
        QVERIFY(start.has_value());
        MainWindow w;
        w.applySession(*start);
        QVERIFY(w.source());
        QCOMPARE(QString::fromStdString(w.source()->path()), QFileInfo(m_other).absoluteFilePath());
        QCOMPARE(w.config()->spec(), changed);
        // The same file as last time keeps its tensor too.
        const auto same = startupSession(last, m_file);
        QVERIFY(same.has_value());
        MainWindow again;
        again.applySession(*same);
        QCOMPARE(again.browser()->selectedTensor(), std::string("layers.1.attn.weight"));
        QCOMPARE(again.config()->spec(), changed);
        // No last session, or one that no longer parses: the file alone.
        QVERIFY(!startupSession({}, m_other).has_value());
        QVERIFY(!startupSession("{not json", m_other).has_value());
    }

    void modelInfoOfGguf() {
        const QString gguf = QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/llama_qk.gguf");
        const auto source = openTensorSource(gguf.toStdString());
        const std::vector<ModelInfoEntry> info = source->modelInfo();
        QVERIFY(!info.empty());
        QCOMPARE(info.front().key, std::string("GGUF version"));
        QCOMPARE(valueOf(info, "general.architecture"), std::string("\"llama\""));
        QCOMPARE(valueOf(info, "llama.attention.head_count"), std::string("4"));
        QCOMPARE(valueOf(info, "llama.attention.head_count_kv"), std::string("2"));

        MainWindow w;
        auto* view = w.findChild<ModelInfoView*>();
        QVERIFY(view);
        QCOMPARE(view->model()->rowCount(), 0); // nothing open yet
        QVERIFY(w.openFile(gguf));
        QCOMPARE(view->model()->rowCount(), static_cast<int>(info.size()));
        const auto found = view->model()->findItems(QStringLiteral("general.architecture"));
        QCOMPARE(found.size(), 1);
        QCOMPARE(view->model()->item(found.front()->row(), 1)->text(), QStringLiteral("\"llama\""));
        QVERIFY(w.openFile(m_file)); // a safetensors file without __metadata__: the rows go
        QCOMPARE(view->model()->rowCount(), 0);
    }

    void modelInfoOfOnnx() {
#ifndef QUANTLENS_TEST_ONNX
        QSKIP("built without ONNX");
#else
        // A producer string that would drive a terminal, and a property far longer than a line.
        const QString onnxFile = path("info.onnx");
        const QString script = QStringLiteral(
            "import sys, onnx\n"
            "from onnx import TensorProto, helper, numpy_helper\n"
            "import numpy as np\n"
            "w = numpy_helper.from_array(np.ones((4, 8), np.float32), 'fc.weight')\n"
            "x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 8])\n"
            "y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 4])\n"
            "n = helper.make_node('Gemm', ['x', 'fc.weight'], ['y'], transB=1)\n"
            "g = helper.make_graph([n], 'g', [x], [y], initializer=[w])\n"
            "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)],\n"
            "                      producer_name='exporter\\x1b[31m', producer_version='2.1')\n"
            "helper.set_model_props(m, {'license': 'x' * 1000})\n"
            "onnx.save(m, sys.argv[1])\n");
        QString error;
        qltest::runPython({QStringLiteral("-c"), script, onnxFile}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const auto source = openTensorSource(onnxFile.toStdString());
        const std::vector<ModelInfoEntry> info = source->modelInfo();
        QVERIFY(std::stoi(valueOf(info, "ir_version")) >= 3);
        QCOMPARE(valueOf(info, "opset ai.onnx"), std::string("17"));
        QCOMPARE(valueOf(info, "producer_name"), printable("exporter\x1b[31m"));
        QVERIFY(valueOf(info, "producer_name").find('\x1b') == std::string::npos);
        QCOMPARE(valueOf(info, "producer_version"), std::string("2.1"));
        const std::string license = valueOf(info, "license");
        QVERIFY2(license.size() <= 240 + 3 && license.size() > 200, license.c_str()); // capped, "…" ending
        QVERIFY(license.ends_with("\u2026"));

        MainWindow w;
        QVERIFY(w.openFile(onnxFile));
        auto* view = w.findChild<ModelInfoView*>();
        QVERIFY(view);
        QCOMPARE(view->model()->findItems(QStringLiteral("opset ai.onnx")).size(), 1);
#endif
    }
};

QTEST_MAIN(TestGuiStart)
#include "tst_gui_start.moc"
