// Plan on any weight: each weight is planned along its role's axes, whatever its name and layout
// (conv nets with Paddle names, recurrent weights, ONNX weights by their consumer, a real PaddleOCR
// graph), each cell checked against the job's own run of that spec; what is not planned is listed
// with its reason; and the CLI's plan of a conv net, its recipe and its refusals.
#include "base/error.h"
#include "cli_test_util.h"
#include "direct_error.h"
#include "io/safetensors_writer.h"
#include "io_test_util.h"
#include "job/plan_output.h"
#include "job_test_util.h"
#include "plan_test_util.h"
#include "quant/weight_role.h"
#include "quantlens/config.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

using namespace ql;
using namespace qltest;

namespace {

const char* const kSample = QUANTLENS_SOURCE_DIR "/resources/sample/sample_model.safetensors";

// The error of one planned cell against the job's own run of the candidate along the tensor's role
// (the spec the role gives, quantized by runTensorJob and dequantized by the scalar reference), and
// the axes that run used.
struct RoleRun {
    double error = 0;
    std::vector<int> axes;
};
RoleRun roleRun(const JobRequest& request, const QuantSpec& spec, const std::string& name) {
    JobRequest r = request;
    r.roleAxes = true; // what the CLI does without --axis
    const DirectError d = directError(r, spec, name);
    return {d.error, d.run.a.report.plan.spec.axes};
}

bool hasReason(const PlanMeasurements& m, const std::string& name, const std::string& part) {
    return std::any_of(m.notPlanned.begin(), m.notPlanned.end(), [&](const auto& n) {
        return n.first == name && n.second.find(part) != std::string::npos;
    });
}

const PlanTensor* plannedNamed(const PlanMeasurements& m, const std::string& name) {
    for (const auto& t : m.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

} // namespace

class TestPlanRoles : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Plan on any weight: PaddleOCR's classifier (the bundled sample) names its weights
    // ".w_0" and is all convs: each conv, and the fc, is planned along its role's axes, its cells
    // the job's own run of that spec; biases, batch-norm vectors and scalars are listed, not planned.
    void plansEveryWeightOfAConvNet() {
        const JobRequest request = jobRequest(kSample, {});
        const auto candidates = planCandidatesNamed({"int8-channel", "int4-g32", "mxfp4", "keep"});
        const auto names = selectTensors(*request.source, {{}, {}, true});
        const PlanMeasurements m = measurePlan(request, names, candidates);
        QCOMPARE(m.tensors.size() + m.notPlanned.size(), names.size());
        int convs = 0, pointwiseAlongInputs = 0;
        for (const PlanTensor& t : m.tensors) {
            const QString row = QString::fromStdString(t.name + " (" + t.role + ")");
            QVERIFY2(t.shape.size() == 4 || t.name == "fc_0.w_0", qPrintable(row));
            QVERIFY2(!t.role.empty(), qPrintable(row));
            convs += t.shape.size() == 4;
            for (std::size_t k = 0; k + 1 < candidates.size(); ++k) {
                const PlanCell& cell = t.cells[k];
                if (cell.bits < 0) {
                    QVERIFY2(!cell.why.empty(), qPrintable(row));
                    continue;
                }
                const RoleRun oracle = roleRun(request, *candidates[k].spec, t.name);
                QVERIFY2(
                    std::abs(cell.error - oracle.error) <= 1e-9 * oracle.error,
                    qPrintable(row + QStringLiteral(" / ") + QString::fromStdString(candidates[k].name)));
                if (t.shape.size() == 4) {
                    // No compressed-tensors layout for a 4-D weight: the native layout's bits, said so.
                    QVERIFY2(!cell.noCompressedTensors.empty(), qPrintable(row));
                    const std::int64_t n = t.elements, out = t.shape[0];
                    if (candidates[k].name == "int8-channel") QCOMPARE(cell.bits, n * 8 + out * 32);
                    if (candidates[k].name == "mxfp4") {
                        QCOMPARE(oracle.axes, std::vector<int>{1}); // along the input channels
                        const std::int64_t in = t.shape[1], blocks = n / in * ((in + 31) / 32);
                        QCOMPARE(cell.bits, n * 4 + blocks * 8); // an E8M0 scale code a block
                        pointwiseAlongInputs += t.shape[2] == 1;
                    }
                }
            }
        }
        QCOMPARE(convs, 53);
        QVERIFY(pointwiseAlongInputs > 5);
        QVERIFY(plannedNamed(m, "fc_0.w_0"));
        QVERIFY(hasReason(m, "batch_norm_0.w_0", "not a weight"));
        QVERIFY(hasReason(m, "batch_norm_0.w_0", "--include-non-weights"));
        QVERIFY(hasReason(m, "p2o.helper.constant.0", "scalar"));
        // Non-weights too when asked: a batch-norm vector is planned then.
        const PlanMeasurements all =
            measurePlan(request, {"batch_norm_0.w_0", "conv2d_1.w_0"},
                        planCandidatesNamed({"int8-channel", "keep"}), {}, {.includeNonWeights = true});
        QCOMPARE(all.tensors.size(), std::size_t{2});
        QVERIFY(all.notPlanned.empty());
    }

    // Recurrent weights by name (PyTorch GRU/LSTM "weight_ih_l0" / "weight_hh_l0"), not ".weight":
    // planned per gate row and along the inputs; their biases listed.
    void plansRecurrentWeightsByName() {
        const std::string model = path("gru.safetensors");
        std::mt19937_64 rng(3);
        std::normal_distribution<float> normal(0.0f, 0.1f);
        auto random = [&](const Shape& shape) {
            std::vector<float> v(static_cast<std::size_t>(elementCount(shape)));
            for (float& x : v)
                x = normal(rng);
            return Tensor::fromFloats(shape, v);
        };
        writeSafetensors(model, {{"rnn.weight_ih_l0", random({3 * 32, 64})},
                                 {"rnn.weight_hh_l0", random({3 * 32, 32})},
                                 {"rnn.bias_ih_l0", random({3 * 32})}});
        const JobRequest request = jobRequest(model, {});
        const auto candidates = planCandidatesNamed({"int4-g32", "int8-channel", "keep"});
        const PlanMeasurements m =
            measurePlan(request, selectTensors(*request.source, {{}, {}, true}), candidates);
        QCOMPARE(m.tensors.size(), std::size_t{2});
        QVERIFY(hasReason(m, "rnn.bias_ih_l0", "not a weight"));
        for (const PlanTensor& t : m.tensors) {
            QVERIFY2(t.role.find("recurrent") != std::string::npos, t.role.c_str());
            for (std::size_t k = 0; k < 2; ++k) {
                QVERIFY2(t.cells[k].bits > 0, t.cells[k].why.c_str());
                QVERIFY(t.cells[k].noCompressedTensors.empty()); // [gates*hidden, in]: a Linear's layout
                const RoleRun oracle = roleRun(request, *candidates[k].spec, t.name);
                QCOMPARE(oracle.axes, std::vector<int>{k == 0 ? 1 : 0});
                QVERIFY(std::abs(t.cells[k].error - oracle.error) <= 1e-9 * oracle.error);
            }
        }
    }

    // ONNX: the consumer decides (MatMul's [in, out], GRU's W and R), Gather's table is not planned.
    void plansOnnxWeightsByTheirConsumer() {
        if (!QUANTLENS_HAVE_ONNX || !pythonHas(QStringLiteral("onnx, numpy")))
            QSKIP("needs ONNX support and python3-onnx");
        const std::string model = path("roles.onnx");
        QString err;
        runPython({pythonScript("weight_roles_onnx.py"), QString::fromStdString(model)}, &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const JobRequest request = jobRequest(model, {});
        const auto candidates = planCandidatesNamed({"int4-g32", "int8-channel", "keep"});
        const PlanMeasurements m =
            measurePlan(request, selectTensors(*request.source, {{}, {}, true}), candidates);
        QVERIFY(hasReason(m, "emb.w", "embedding"));
        QVERIFY(hasReason(m, "conv3.b", "not a weight"));
        const std::vector<std::tuple<std::string, std::string, std::vector<int>, std::vector<int>>> expected =
            {
                {"mm.w", "linear-in-out", {0}, {1}}, // [in, out]: blocks down the inputs, a scale per column
                {"gru.W", "recurrent", {2}, {1}},
                {"gru.R", "recurrent", {2}, {1}},
                {"conv1.w", "pointwise-conv", {1}, {0}},
            };
        for (const auto& [name, role, blockAxes, channelAxes] : expected) {
            const PlanTensor* t = plannedNamed(m, name);
            QVERIFY2(t, name.c_str());
            QVERIFY2(t->role.rfind(role, 0) == 0, t->role.c_str());
            for (std::size_t k = 0; k < 2; ++k) {
                // No int4 block of 32: gru.R has 16 inputs. (TensorRT blocks no axis 1 of a 4-D conv: the
                // 1x1 conv takes them through its view [32, 64], quant/weight_view.h.)
                const char* refusal = name == "gru.R" ? "axis 2 has 16" : "";
                if (k == 0 && *refusal) {
                    QVERIFY2(t->cells[k].bits < 0 && t->cells[k].why.find(refusal) != std::string::npos,
                             t->cells[k].why.c_str());
                    continue;
                }
                QVERIFY2(t->cells[k].bits > 0, t->cells[k].why.c_str());
                const RoleRun oracle = roleRun(request, *candidates[k].spec, name);
                QCOMPARE(oracle.axes, k == 0 ? blockAxes : channelAxes);
                QVERIFY(std::abs(t->cells[k].error - oracle.error) <= 1e-9 * oracle.error);
            }
        }
    }

    // PaddleOCR's classifier as ONNX (fetched by tst_real_model): the graph decides each role, so the
    // fc that the safetensors copy can only read as [out, in] is MatMul's [in, out] here, a scale per
    // column; the depthwise convs are the graph's group convs.
    void plansPaddleOnnxByTheGraph() {
        const QString model = QStringLiteral(
            QUANTLENS_BINARY_DIR "/io-real-models/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx");
        if (!QUANTLENS_HAVE_ONNX) QSKIP("this build reads no ONNX");
        if (!QFileInfo::exists(model))
            QSKIP("the PaddleOCR models are fetched by tst_real_model (npm); run it first");
        const JobRequest request = jobRequest(model.toStdString(), {});
        const auto candidates = planCandidatesNamed({"int8-channel", "keep"});
        const PlanMeasurements m =
            measurePlan(request, selectTensors(*request.source, {{}, {}, true}), candidates);
        QCOMPARE(m.tensors.size(), std::size_t{54}); // 53 convs and the fc, as in the bundled copy
        const PlanTensor* fc = plannedNamed(m, "fc_0.w_0");
        QVERIFY(fc);
        QVERIFY2(fc->role.rfind("linear-in-out", 0) == 0 && fc->role.find("ONNX MatMul") != std::string::npos,
                 fc->role.c_str());
        const RoleRun oracle = roleRun(request, *candidates[0].spec, "fc_0.w_0");
        QCOMPARE(oracle.axes, std::vector<int>{1});
        QVERIFY(std::abs(fc->cells[0].error - oracle.error) <= 1e-9 * oracle.error);
        const PlanTensor* dw = plannedNamed(m, "conv2d_10.w_0");
        QVERIFY(dw && dw->role.rfind("depthwise-conv", 0) == 0);
    }

    // The CLI on the conv net: --match narrows (and widens past ".weight"), what is kept is listed
    // with its reason in the output and the plan file; --include-non-weights plans the vectors; with
    // --out only what a compressed-tensors checkpoint stores is chosen, so the export is written.
    void cliPlansAConvNet() {
        const QString dir = m_dir.path(), sample = QString::fromUtf8(kSample);
        const QStringList base = {QStringLiteral("plan"), sample, QStringLiteral("--bits-per-weight"),
                                  QStringLiteral("9"), QStringLiteral("-q")};
        CliRun run = runCli(base + QStringList{QStringLiteral("--match"),
                                               QStringLiteral("conv2d_1[0-9]\\.|batch_norm_1\\."),
                                               QStringLiteral("--report"), QStringLiteral("conv.json")},
                            dir);
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(run.out.contains("kept as they are") && run.out.contains("batch_norm_1.w_0: a bias, norm"),
                 run.out.constData());
        const auto plan = nlohmann::json::parse(readFile(path("conv.json")));
        QCOMPARE(plan["tensors"].size(), std::size_t{10}); // conv2d_10 .. conv2d_19
        for (const auto& t : plan["tensors"]) {
            QVERIFY(t["name"].get<std::string>().rfind("conv2d_1", 0) == 0);
            QCOMPARE(t["shape"].size(), std::size_t{4});
            QVERIFY(!t["role"].get<std::string>().empty());
        }
        QVERIFY(!plan["not_planned"].empty());
        for (const auto& n : plan["not_planned"])
            QVERIFY(n["why"].get<std::string>().find("not a weight") != std::string::npos);
        // Read back, re-planned: the cells without a compressed-tensors layout come back as they were.
        run = runCli({QStringLiteral("plan"), QStringLiteral("--from"), QStringLiteral("conv.json"),
                      QStringLiteral("--bits-per-weight"), QStringLiteral("9"), QStringLiteral("--recipe"),
                      QStringLiteral("conv.yaml")},
                     dir);
        QVERIFY2(run.code == 0, run.err.constData());
        // The recipe cannot hold those choices: each is ignored there, and said so.
        QVERIFY2(run.err.contains("is kept (ignored) in the recipe") &&
                     run.err.contains("no compressed-tensors"),
                 run.err.constData());
        // Nor can a checkpoint: --out on that plan is refused before anything is written, with the reason.
        QVERIFY(QDir(dir).mkpath(QStringLiteral("convrefused")));
        run = runCli({QStringLiteral("plan"), QStringLiteral("--from"), QStringLiteral("conv.json"),
                      QStringLiteral("--bits-per-weight"), QStringLiteral("9"), QStringLiteral("--out"),
                      QStringLiteral("convrefused/model.safetensors")},
                     dir);
        QVERIFY2(run.code == 1 && run.err.contains("has no compressed-tensors layout here"),
                 run.err.constData());
        QVERIFY(!QFile::exists(dir + QStringLiteral("/convrefused/model.safetensors")));
        // Only non-weights selected: nothing to plan, and the reason.
        run = runCli(base + QStringList{QStringLiteral("--match"), QStringLiteral("^batch_norm_1\\.")}, dir);
        QVERIFY2(run.code == 1 && run.err.contains("no selected tensor is a weight") &&
                     run.err.contains("--include-non-weights"),
                 run.err.constData());
        run = runCli(base + QStringList{QStringLiteral("--match"), QStringLiteral("^batch_norm_1\\."),
                                        QStringLiteral("--include-non-weights")},
                     dir);
        QVERIFY2(run.code == 0 && run.out.contains("batch_norm_1.w_0"), run.err.constData());
        // An export: only choices a compressed-tensors checkpoint stores. The 1x1 conv has none but
        // keep (a 4-D weight); the fc [200, 2] takes int8 per channel (24 bits a weight with its
        // scales), which a budget of 26 leaves room for and nothing else does.
        QVERIFY(QDir(dir).mkpath(QStringLiteral("convout")));
        run =
            runCli({QStringLiteral("plan"), sample, QStringLiteral("--bits-per-weight"), QStringLiteral("26"),
                    QStringLiteral("-q"), QStringLiteral("--match"), QStringLiteral("^(conv2d_1|fc_0)\\."),
                    QStringLiteral("--out"), QStringLiteral("convout/model.safetensors"),
                    QStringLiteral("--report"), QStringLiteral("convout.json")},
                   dir);
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY(QFile::exists(dir + QStringLiteral("/convout/model.safetensors")));
        const auto exported = nlohmann::json::parse(readFile(path("convout.json")));
        QCOMPARE(exported["choice"].size(), std::size_t{2});
        for (const auto& c : exported["choice"])
            QCOMPARE(c["candidate"].get<std::string>(),
                     std::string(c["name"] == "fc_0.w_0" ? "int8-channel" : "keep"));
        for (const auto& t : exported["tensors"])
            if (t["name"] == "conv2d_1.w_0")
                for (std::size_t k = 0; k + 1 < t["cells"].size(); ++k) {
                    QVERIFY(t["cells"][k]["bits"] == -1 && !t["cells"][k]["why"].get<std::string>().empty());
                    if (exported["candidates"][k]["name"] == "int8-channel")
                        QVERIFY(t["cells"][k]["why"].get<std::string>().find("compressed-tensors") !=
                                std::string::npos);
                }
    }
};

QTEST_GUILESS_MAIN(TestPlanRoles)
#include "tst_plan_roles.moc"
