// Importance from the user's own data and the planner's output objective, run as the CLI
// process with ONNX Runtime from scripts/setup-onnxruntime.sh (missing, the suite fails):
//  - `evaluate --activations` writes each weight's input_sq_mean from the float run; `plan --importance`
//    reads it back and weighs every weight of PaddleOCR's classifier (Conv, depthwise Conv, MatMul) and
//    of a Gemm MLP with it, and the values equal numpy's over the same inputs as onnxruntime-node gives
//    them (the consumers' data inputs made graph outputs);
//  - `plan --objective output` measures each weight and candidate at the model's outputs: its plan
//    meets the budget, differs from the weight objective's, and has the least output error of the two.
#include "io_test_util.h"
#include "tst_evaluate_util.h"

#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace qltest;

namespace {

// Σ over the tensors of the cell `choice` names, in a plan file's cells.
double totalError(const nlohmann::json& plan, const nlohmann::json& choice) {
    std::map<std::string, std::size_t> candidate;
    for (std::size_t k = 0; k < plan["candidates"].size(); ++k)
        candidate[plan["candidates"][k]["name"].get<std::string>()] = k;
    double sum = 0;
    for (std::size_t t = 0; t < plan["tensors"].size(); ++t) {
        const auto& tensor = plan["tensors"][t];
        if (tensor["name"] != choice[t]["name"]) return NAN;
        sum +=
            tensor["cells"][candidate.at(choice[t]["candidate"].get<std::string>())]["error"].get<double>();
    }
    return sum;
}

} // namespace

class TestEvaluateImportance : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_skipModels;
    QString path(const QString& name) const { return m_dir.filePath(name); }

    void fixture(const QStringList& args) {
        QString err;
        runPython(QStringList{QStringLiteral(QUANTLENS_TEST_SCRIPTS "/evaluate_fixtures.py")} + args, &err,
                  300000);
        QVERIFY2(err.isEmpty(), qPrintable(err));
    }

    // evaluate --activations on `samples` samples of `input` (shape `dims` each); read back by plan
    // --importance for every weight; checked against numpy over onnxruntime-node's values.
    void activationsMatch(const QString& model, const QString& input, const QString& dims, int samples,
                          int weights) {
        const QString tag = QFileInfo(model).baseName();
        const QString inputs = path(tag + QStringLiteral("_in"));
        fixture({QStringLiteral("inputs"), inputs, input, QStringLiteral("float32"), QString::number(samples),
                 dims});
        const QString stats = path(tag + QStringLiteral("_act.safetensors"));
        const Run r = cli({QStringLiteral("evaluate"), model, QStringLiteral("--inputs"),
                           inputs + QStringLiteral(".npz"), QStringLiteral("--no-local"),
                           QStringLiteral("--activations"), stats, QStringLiteral("-q")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("activations: %1 weights' input_sq_mean").arg(weights)),
                 qPrintable(r.out));
        QVERIFY2(!r.out.contains(QStringLiteral("none for")), qPrintable(r.out));

        // Every weight the plan takes is weighted by its entry, along its role's input channels.
        const QString plan = path(tag + QStringLiteral("_plan.json"));
        const Run p = cli({QStringLiteral("plan"), model, QStringLiteral("--importance"), stats,
                           QStringLiteral("--candidates"), QStringLiteral("int8-channel,keep"),
                           QStringLiteral("--bits-per-weight"), QStringLiteral("12"),
                           QStringLiteral("--report"), plan, QStringLiteral("-q")});
        QVERIFY2(p.code == 0, qPrintable(p.err));
        const auto j = readJson(plan);
        QCOMPARE(static_cast<int>(j["tensors"].size()), weights);
        for (const auto& t : j["tensors"])
            QVERIFY2(t["weighted"].get<bool>(), qPrintable(QString::fromStdString(t.dump())));

        // The independent computation: the consumers' data inputs as graph outputs, run by
        // onnxruntime-node sample by sample, E[x^2] per channel in numpy.
        const QString tapped = path(tag + QStringLiteral("_taps.onnx"));
        const QString taps = path(tag + QStringLiteral("_taps.json"));
        fixture({QStringLiteral("taps"), model, tapped, taps});
        QStringList peers;
        for (int k = 0; k < samples; ++k) {
            const QString peer = path(tag + QStringLiteral("_peer%1").arg(k));
            const Run node = run(QStringLiteral("node"),
                                 {QStringLiteral(QUANTLENS_TEST_SCRIPTS "/ort_node_peer.js"), tapped, input,
                                  dims, inputs + QStringLiteral(".%1.bin").arg(k), peer});
            QVERIFY2(node.code == 0, qPrintable(node.err));
            peers << peer;
        }
        fixture(QStringList{QStringLiteral("check-activations"), taps, stats, input, dims, inputs} + peers);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const QString missing = missingForEvaluate();
        QVERIFY2(missing.isEmpty(), qPrintable(missing));
        m_skipModels = fetchPaddleModels();
        QVERIFY2(m_skipModels.isEmpty() || m_skipModels.startsWith(QStringLiteral("npm")),
                 qPrintable(m_skipModels));
    }

    // PaddleOCR's classifier: 53 convs (11 depthwise, their filters each reading one channel) whose first
    // one reads the graph input, and a MatMul [in, out]; weights in Constant nodes.
    void activationsPaddleClassifier() {
        if (!m_skipModels.isEmpty()) QSKIP(qPrintable(m_skipModels));
        activationsMatch(kCls, QStringLiteral("x"), QStringLiteral("1,3,48,192"), 2, 54);
    }

    // Two Gemm layers (transB=1, [out, in]), the first reading the graph input.
    void activationsGemm() {
        const QString model = path(QStringLiteral("mlp.onnx"));
        fixture({QStringLiteral("mlp"), model});
        activationsMatch(model, QStringLiteral("features"), QStringLiteral("1,32"), 3, 2);
    }

    // The statistics go to a .safetensors file of their own, never over an input.
    void activationsRefusals() {
        const QString model = path(QStringLiteral("mlp_refusals.onnx"));
        fixture({QStringLiteral("mlp"), model});
        Run r =
            cli({QStringLiteral("evaluate"), model, QStringLiteral("--random"), QStringLiteral("1"),
                 QStringLiteral("--activations"), path(QStringLiteral("stats.json")), QStringLiteral("-q")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("use a .safetensors file name")), qPrintable(r.err));
        const QString both = path(QStringLiteral("both.safetensors"));
        r = cli({QStringLiteral("evaluate"), model, QStringLiteral("--random"), QStringLiteral("1"),
                 QStringLiteral("--activations"), both, QStringLiteral("--save-outputs"), both,
                 QStringLiteral("-q")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("name one file")), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(both));
        // The inputs as safetensors: features [2, 1, 32].
        const QString inputs = path(QStringLiteral("inputs.safetensors"));
        QString err;
        runPython({QStringLiteral("-c"),
                   QStringLiteral("import json, struct, sys, numpy as np\n"
                                  "x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 1, 32).tobytes()\n"
                                  "h = json.dumps({'features': {'dtype': 'F32', 'shape': [2, 1, 32], "
                                  "'data_offsets': [0, len(x)]}}).encode()\n"
                                  "open(sys.argv[1], 'wb').write(struct.pack('<Q', len(h)) + h + x)"),
                   inputs},
                  &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const std::string before = readFile(inputs.toStdString());
        r = cli({QStringLiteral("evaluate"), model, QStringLiteral("--inputs"), inputs,
                 QStringLiteral("--no-local"), QStringLiteral("-q")});
        QVERIFY2(r.code == 0, qPrintable(r.err)); // a valid inputs file
        r = cli({QStringLiteral("evaluate"), model, QStringLiteral("--inputs"), inputs,
                 QStringLiteral("--activations"), inputs, QStringLiteral("-q")});
        QVERIFY(r.code != 0);
        QVERIFY2(r.err.contains(QStringLiteral("--activations")), qPrintable(r.err));
        QVERIFY(readFile(inputs.toStdString()) == before);
    }

    // plan --objective output on PaddleOCR's classifier: the cost said up front, a plan within the
    // budget whose total output error is the least of any, the weight objective's plan included.
    void planOutputObjective() {
        if (!m_skipModels.isEmpty()) QSKIP(qPrintable(m_skipModels));
        const QStringList common{kCls,
                                 QStringLiteral("--candidates"),
                                 QStringLiteral("mxfp4,int8-channel,keep"),
                                 QStringLiteral("--bits-per-weight"),
                                 QStringLiteral("6"),
                                 QStringLiteral("-q")};
        const QString weightsPlan = path(QStringLiteral("weights_plan.json"));
        const QString outputPlan = path(QStringLiteral("output_plan.json"));
        const Run w =
            cli(QStringList{QStringLiteral("plan"), QStringLiteral("--report"), weightsPlan} + common);
        QVERIFY2(w.code == 0, qPrintable(w.err));
        const Run o =
            cli(QStringList{QStringLiteral("plan")} + common +
                QStringList{QStringLiteral("--report"), outputPlan, QStringLiteral("--objective"),
                            QStringLiteral("output"), QStringLiteral("--random"), QStringLiteral("3"),
                            QStringLiteral("--dim"), QStringLiteral("p2o.DynamicDimension.1=48"),
                            QStringLiteral("--dim"), QStringLiteral("p2o.DynamicDimension.2=192")});
        QVERIFY2(o.code == 0, qPrintable(o.err));
        QVERIFY2(o.err.contains(
                     QStringLiteral("up to 54 weights x 2 candidates = 108 runs of the model, each over 3 "
                                    "samples")),
                 qPrintable(o.err));
        QVERIFY2(o.out.contains(QStringLiteral("squared output error")), qPrintable(o.out));
        const auto pw = readJson(weightsPlan), po = readJson(outputPlan);
        QVERIFY(po["output_objective"].get<bool>());
        QVERIFY(!pw["output_objective"].get<bool>());
        QVERIFY(po["bits"].get<std::int64_t>() <= po["budget_bits"].get<std::int64_t>());
        QCOMPARE(po["budget_bits"], pw["budget_bits"]);
        // The same weights and bits, measured against another error.
        QCOMPARE(po["tensors"].size(), pw["tensors"].size());
        int differ = 0;
        for (std::size_t t = 0; t < po["tensors"].size(); ++t) {
            for (std::size_t k = 0; k < po["candidates"].size(); ++k)
                QCOMPARE(po["tensors"][t]["cells"][k]["bits"], pw["tensors"][t]["cells"][k]["bits"]);
            differ += po["choice"][t]["candidate"] != pw["choice"][t]["candidate"];
            // The output error grows with the weight's: MXFP4 costs more than int8 at the outputs too.
            const auto& cells = po["tensors"][t]["cells"];
            if (cells[0]["bits"].get<std::int64_t>() > 0)
                QVERIFY2(cells[0]["error"].get<double>() > cells[1]["error"].get<double>(),
                         qPrintable(QString::fromStdString(po["tensors"][t].dump())));
        }
        QVERIFY2(differ > 0, "the output objective chose as the weight objective did");
        // Each plan is the best under its own objective: the output plan's output error is below what the
        // weight plan's choice costs at the outputs, and the other way round.
        QVERIFY(po["exact"].get<bool>() && pw["exact"].get<bool>());
        QVERIFY(totalError(po, po["choice"]) < totalError(po, pw["choice"]));
        QVERIFY(totalError(pw, pw["choice"]) < totalError(pw, po["choice"]));
        QVERIFY(std::abs(totalError(po, po["choice"]) - po["error"].get<double>()) <=
                1e-9 * po["error"].get<double>());
    }

    // The output objective's refusals: usage errors before anything runs.
    void planOutputObjectiveRefusals_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::addRow("no-inputs") << QStringList{QStringLiteral("--objective"), QStringLiteral("output")}
                                   << QStringLiteral("exactly one of --inputs or --random");
        QTest::addRow("inputs-without-objective")
            << QStringList{QStringLiteral("--random"), QStringLiteral("2")}
            << QStringLiteral("go with --objective output");
        QTest::addRow("with-importance")
            << QStringList{QStringLiteral("--objective"),  QStringLiteral("output"),
                           QStringLiteral("--random"),     QStringLiteral("2"),
                           QStringLiteral("--importance"), QStringLiteral("x.safetensors")}
            << QStringLiteral("no --importance");
    }
    void planOutputObjectiveRefusals() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const QString model = path(QStringLiteral("mlp_plan.onnx"));
        if (!QFileInfo::exists(model)) fixture({QStringLiteral("mlp"), model});
        const QString report = path(QStringLiteral("refused_plan.json"));
        const Run r = cli(QStringList{QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"),
                                      QStringLiteral("6"), QStringLiteral("--report"), report} +
                          args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(report));
    }
};

QTEST_GUILESS_MAIN(TestEvaluateImportance)
#include "tst_evaluate_importance.moc"
