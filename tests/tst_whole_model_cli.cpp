// Whole-model runs in the CLI: weights only by default (the role table decides what a
// weight is), --include-non-weights for the rest; and the spec flags' mistakes said as usage errors
// with their real reason and a suggestion for a near miss. On the bundled PaddleOCR sample.
#include "cli_test_util.h"
#include "io_test_util.h"

#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <nlohmann/json.hpp>

using namespace qltest;

namespace {

const QString kSample = QStringLiteral(QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors");

// The report's tensors by name: {quantized, kept reason}.
std::map<std::string, std::string> keptByName(const nlohmann::json& report) {
    std::map<std::string, std::string> kept;
    for (const auto& t : report.at("tensors"))
        kept[t.at("name").get<std::string>()] = t.value("passed_through", std::string());
    return kept;
}

} // namespace

class TestWholeModelCli : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    CliRun cli(const QStringList& args) { return runCli(args, m_dir.path()); }
    nlohmann::json report(const char* name) {
        return nlohmann::json::parse(readFile(m_dir.filePath(QString::fromUtf8(name)).toStdString()));
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // quantize --all: the 53 convs and the fc are quantized; batch-norm vectors, biases and scalars are
    // kept, each with the reason, whatever the spec would do to them. --include-non-weights takes them.
    void weightsOnlyByDefault() {
        const QStringList base = {QStringLiteral("quantize"), kSample,
                                  QStringLiteral("--all"),    QStringLiteral("-q"),
                                  QStringLiteral("--preset"), QStringLiteral("torch")};
        CliRun run = cli(base + QStringList{QStringLiteral("--report"), QStringLiteral("weights.json")});
        QVERIFY2(run.code == 0, run.err.constData());
        auto kept = keptByName(report("weights.json"));
        int weights = 0;
        for (const auto& [name, why] : kept) {
            if (name.rfind("conv2d_", 0) == 0 && name.find(".w_0") != std::string::npos) {
                QVERIFY2(why.empty(), name.c_str());
                ++weights;
            }
            if (name.rfind("batch_norm_", 0) == 0 || name.find(".b_0") != std::string::npos)
                QVERIFY2(why.find("not a weight") != std::string::npos &&
                             why.find("--include-non-weights") != std::string::npos,
                         (name + ": " + why).c_str());
        }
        QCOMPARE(weights, 53);
        QVERIFY(kept.at("fc_0.w_0").empty());
        run = cli(base + QStringList{QStringLiteral("--include-non-weights"), QStringLiteral("--report"),
                                     QStringLiteral("all.json")});
        QVERIFY2(run.code == 0, run.err.constData());
        kept = keptByName(report("all.json"));
        QVERIFY2(kept.at("batch_norm_0.w_0").empty(), kept.at("batch_norm_0.w_0").c_str());
        QVERIFY(kept.at("fc_0.b_0").empty());
        QVERIFY(!kept.at("p2o.helper.constant.0").empty()); // a scalar has no channel: kept still
        // A tensor named is taken as asked: a bias quantized without the switch.
        run = cli({QStringLiteral("quantize"), kSample, QStringLiteral("--tensor"),
                   QStringLiteral("fc_0.b_0"), QStringLiteral("-q")});
        QVERIFY2(run.code == 0, run.err.constData());
    }

    // The run ends with the weights' size and bits per weight, before and after. Worked out here from
    // the report's entries: every tensor of the sample is stored at 32 bits (f32, one int32); torch
    // int8 per-channel stores 8 bits a code and an f32 scale per channel; kept tensors stay as stored.
    void summarySaysTheSizes() {
        CliRun run = cli({QStringLiteral("quantize"), kSample, QStringLiteral("--all"), QStringLiteral("-q"),
                          QStringLiteral("--preset"), QStringLiteral("torch"), QStringLiteral("--report"),
                          QStringLiteral("sizes.json")});
        QVERIFY2(run.code == 0, run.err.constData());
        std::int64_t elements = 0, before = 0, after = 0, quantized = 0, quantizedAfter = 0;
        const nlohmann::json written = report("sizes.json");
        for (const auto& t : written.at("tensors")) {
            QVERIFY(t.at("dtype") == "f32" || t.at("dtype") == "int32");
            std::int64_t n = 1;
            for (const auto& d : t.at("shape"))
                n *= d.get<std::int64_t>();
            elements += n;
            before += 32 * n;
            if (t.contains("passed_through")) {
                after += 32 * n;
                continue;
            }
            const auto& spec = t.at("spec");
            QCOMPARE(spec.at("code_dtype").get<std::string>(), std::string("int8"));
            QVERIFY(spec.at("symmetric").get<bool>());
            std::int64_t scales = 1;
            for (const auto& d : spec.at("scale_shape"))
                scales *= d.get<std::int64_t>();
            quantized += n;
            quantizedAfter += 8 * n + 32 * scales;
            after += 8 * n + 32 * scales;
        }
        QVERIFY(quantized > 0 && quantized < elements);
        const QString line = QStringLiteral("\nWeights %1 KB → %2 KB; quantized tensors 32.00 → %3 bits per "
                                            "weight; whole model 32.00 → %4 bits per weight.\n")
                                 .arg(before / 8 / 1024.0, 0, 'f', 1)
                                 .arg(after / 8 / 1024.0, 0, 'f', 1)
                                 .arg(double(quantizedAfter) / double(quantized), 0, 'f', 2)
                                 .arg(double(after) / double(elements), 0, 'f', 2);
        QVERIFY2(QString::fromUtf8(run.out).contains(line),
                 qPrintable(line + QString::fromUtf8(run.out.right(600))));
    }

    // `--axis 5` fits no tensor of the model: a usage error (2), not a run whose tensors all fail (1).
    void axisOutOfRangeIsAUsageError() {
        CliRun run = cli({QStringLiteral("quantize"), kSample, QStringLiteral("--all"),
                          QStringLiteral("--axis"), QStringLiteral("5"), QStringLiteral("-q")});
        QVERIFY2(run.code == 2 &&
                     run.err.contains("--axis fits none of the selected tensors: axis 5 is out of range"),
                 run.err.constData());
        run = cli({QStringLiteral("compare"), kSample, QStringLiteral("--tensor"), QStringLiteral("fc_0.w_0"),
                   QStringLiteral("--axis"), QStringLiteral("-3"), QStringLiteral("--preset-b"),
                   QStringLiteral("tensorrt"), QStringLiteral("-q")});
        QVERIFY2(run.code == 2 && run.err.contains("--axis: axis -3 is out of range"), run.err.constData());
        // An axis some tensors have: those it does not fit fail with the reason (exit 1).
        run = cli({QStringLiteral("quantize"), kSample, QStringLiteral("--tensor"),
                   QStringLiteral("fc_0.w_0"), QStringLiteral("--tensor"), QStringLiteral("conv2d_1.w_0"),
                   QStringLiteral("--axis"), QStringLiteral("3"), QStringLiteral("-q")});
        QVERIFY2(run.code == 1 && run.err.contains("fc_0.w_0"), run.err.constData());
    }

    // A bias under 2-D blocks: the reason is its rank, not "--block needs one value".
    void biasUnderTwoDimensionalBlocks() {
        const CliRun run = cli({QStringLiteral("quantize"), kSample, QStringLiteral("--tensor"),
                                QStringLiteral("fc_0.b_0"), QStringLiteral("--preset"),
                                QStringLiteral("tensorrt"), QStringLiteral("--dtype"), QStringLiteral("int4"),
                                QStringLiteral("--block"), QStringLiteral("1,128"), QStringLiteral("-q")});
        QVERIFY2(run.code == 1 &&
                     run.err.contains("blocks of 1,128 name 2 dimensions and this tensor has 1 [2]") &&
                     !run.err.contains("needs one value"),
                 run.err.constData());
    }

    void suggestionsForNearMisses_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("meant");
        QTest::newRow("scheme") << "--scheme"
                                << "perchannel"
                                << "per-channel";
        QTest::newRow("calib") << "--calib"
                               << "entrpy"
                               << "entropy";
        QTest::newRow("dtype") << "--dtype"
                               << "in4"
                               << "int4";
        QTest::newRow("round") << "--round"
                               << "half_even"
                               << "half-even";
    }
    void suggestionsForNearMisses() {
        QFETCH(QString, flag);
        QFETCH(QString, typed);
        QFETCH(QString, meant);
        const CliRun run = cli({QStringLiteral("quantize"), kSample, QStringLiteral("--tensor"),
                                QStringLiteral("fc_0.w_0"), flag, typed, QStringLiteral("-q")});
        QVERIFY2(run.code == 2 && run.err.contains(QStringLiteral("did you mean '%1'").arg(meant).toUtf8()),
                 run.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestWholeModelCli)
#include "tst_whole_model_cli.moc"
