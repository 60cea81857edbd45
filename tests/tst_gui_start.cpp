// How the app starts (issue 39): --help and --version without a display, --screenshot at a fixed
// size, and the last session (window, docks, spec) restored also when a file is given.
#include "gui/main_window.h"
#include "gui/session.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "quantlens/config.h"
#include "widgets/config_panel.h"
#include "widgets/tensor_browser.h"

#include <QComboBox>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
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
    }

    void screenshotAtFixedSize() {
        QFETCH(QStringList, sizeArgs);
        QFETCH(QSize, expected);
        const QString png = path("shot.png");
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
};

QTEST_MAIN(TestGuiStart)
#include "tst_gui_start.moc"
