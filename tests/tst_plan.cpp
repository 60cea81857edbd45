// The mixed-precision planner: the knapsack against brute force (random problems, and a real model's
// measurements), each candidate's bits against the compressed-tensors layout's own sizes, the error
// against a direct computation, the importance weighting, the plan file read back, the llama.cpp
// rules, the llm-compressor recipe, the export read by an independent reader, and the CLI.
#include "base/error.h"
#include "cli_test_util.h"
#include "direct_error.h"
#include "io/export_compressed_tensors.h"
#include "io/safetensors_source.h"
#include "io/safetensors_writer.h"
#include "io_test_util.h"
#include "job/importance.h"
#include "job/plan_output.h"
#include "job_test_util.h"
#include "plan_test_util.h"
#include "quant/reference.h"
#include "quant/weight_role.h"
#include "quantlens/config.h"
#include "report/model_table.h"
#include "report/report_read.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <regex>
#include <set>

using namespace ql;
using namespace qltest;

namespace {

using Options = std::vector<std::vector<PlanOption>>;

// The least error among all choices within the budget, by enumeration.
double bruteForce(const Options& o, std::int64_t budget, std::int64_t unit = 1) {
    double best = INFINITY;
    std::vector<std::size_t> k(o.size(), 0);
    while (true) {
        std::int64_t bits = 0;
        double err = 0;
        for (std::size_t t = 0; t < o.size(); ++t) {
            const PlanOption& p = o[t][k[t]];
            bits += (p.bits + unit - 1) / unit;
            err += p.error;
        }
        if (bits <= budget / unit && err < best) best = err;
        std::size_t t = 0;
        while (t < o.size() && ++k[t] == o[t].size())
            k[t++] = 0;
        if (t == o.size()) return best;
    }
}

std::int64_t gcdOf(const Options& o) {
    std::int64_t g = 0;
    for (const auto& t : o)
        for (const auto& p : t)
            if (std::isfinite(p.error)) g = std::gcd(g, p.bits);
    return g;
}

Options randomProblem(std::mt19937_64& rng) {
    std::uniform_int_distribution<int> tensors(1, 6), formats(1, 5), grain(1, 4);
    std::uniform_real_distribution<double> error(0.0, 10.0);
    Options o(static_cast<std::size_t>(tensors(rng)));
    const std::int64_t g = 8 * grain(rng); // real sizes share factors: bytes, rows
    for (auto& t : o) {
        const int n = formats(rng);
        for (int k = 0; k < n; ++k) {
            PlanOption p{g * std::uniform_int_distribution<std::int64_t>(1, 40)(rng), error(rng)};
            if (k > 0 && rng() % 5 == 0) p.error = INFINITY; // a format the tensor cannot take
            t.push_back(p);
        }
    }
    return o;
}

std::int64_t minBits(const Options& o) {
    std::int64_t s = 0;
    for (const auto& t : o) {
        std::int64_t lo = INT64_MAX;
        for (const auto& p : t)
            if (std::isfinite(p.error)) lo = std::min(lo, p.bits);
        s += lo;
    }
    return s;
}

} // namespace

class TestPlan : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_model, m_stats;
    std::vector<std::vector<double>> m_sqMean; // per module, from the samples, in double

    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const PlanFixture f = writePlanFixture(m_dir.path().toStdString());
        m_model = f.model, m_stats = f.stats, m_sqMean = f.sqMean;
    }

    void solverMatchesBruteForce() {
        std::mt19937_64 rng(11);
        for (int trial = 0; trial < 300; ++trial) {
            const Options o = randomProblem(rng);
            const std::int64_t lo = minBits(o);
            for (std::int64_t budget : {lo - 8, lo, lo + 40, lo + 200, lo + 100000}) {
                const PlanSolution s = solvePlan(o, budget);
                const double expected = bruteForce(o, budget);
                QCOMPARE(s.feasible, std::isfinite(expected));
                if (!s.feasible) continue;
                QVERIFY(s.exact && s.unitBits % 8 == 0); // the common divisor
                QVERIFY(s.bits <= budget);
                double err = 0;
                for (std::size_t t = 0; t < o.size(); ++t)
                    err += o[t][static_cast<std::size_t>(s.choice[t])].error;
                QVERIFY2(std::abs(err - expected) <= 1e-9 * std::max(1.0, expected),
                         qPrintable(QStringLiteral("trial %1: %2 vs %3").arg(trial).arg(err).arg(expected)));
                QVERIFY(std::abs(s.error - err) <= 1e-9 * std::max(1.0, err));
            }
        }
    }

    // Too many levels: costs are rounded up to coarser units; the plan is then the optimum of the
    // rounded problem, and still fits the real budget.
    void coarseUnitsSolveTheRoundedProblem() {
        std::mt19937_64 rng(12);
        for (int trial = 0; trial < 200; ++trial) {
            const Options o = randomProblem(rng);
            const std::int64_t budget = minBits(o) + 150;
            const PlanSolution s = solvePlan(o, budget, PlanSolver{4});
            QCOMPARE(s.exact, s.unitBits == gcdOf(o));
            const double expected = bruteForce(o, budget, s.unitBits);
            QCOMPARE(s.feasible, std::isfinite(expected));
            if (!s.feasible) continue;
            QVERIFY(s.bits <= budget);
            QVERIFY(std::abs(s.error - expected) <= 1e-9 * std::max(1.0, expected));
            QVERIFY(s.error >= bruteForce(o, budget) - 1e-9);
        }
    }

    void frontIsTheBruteForceFront() {
        std::mt19937_64 rng(13);
        for (int trial = 0; trial < 100; ++trial) {
            const Options o = randomProblem(rng);
            const auto front = planFront(o);
            QVERIFY(!front.empty());
            QCOMPARE(front.front().bits, minBits(o));
            for (std::size_t i = 0; i < front.size(); ++i) {
                if (i > 0) QVERIFY(front[i].bits > front[i - 1].bits && front[i].error < front[i - 1].error);
                QVERIFY(std::abs(front[i].error - bruteForce(o, front[i].bits)) <=
                        1e-9 * std::max(1.0, front[i].error));
                if (i > 0)
                    QVERIFY(bruteForce(o, front[i].bits - 1) > front[i].error); // nothing cheaper reaches it
            }
        }
    }

    void unavailableEverywhereIsInfeasible() {
        const Options o = {{{8, INFINITY}}, {{8, 1.0}}};
        QVERIFY(!solvePlan(o, 1000).feasible);
        QVERIFY(planFront(o).empty());
    }

    // Bits are the compressed-tensors layout's own sizes; errors the squared error of the reference x̂.
    void measuresBitsAndErrorsExactly() {
        const JobRequest request = jobRequest(m_model, {});
        const auto candidates = defaultPlanCandidates();
        const std::vector<std::string> names = {"model.layers.0.self_attn.k_proj.weight",
                                                "model.layers.0.mlp.down_proj.weight", "model.norm.weight",
                                                "model.embed_tokens.weight"};
        const PlanMeasurements m = measurePlan(request, names, candidates);
        QCOMPARE(m.tensors.size(), std::size_t{2});
        QCOMPARE(m.notPlanned.size(), std::size_t{2});
        QCOMPARE(m.notPlanned[0].first, std::string("model.norm.weight"));
        QCOMPARE(m.notPlanned[1].first, std::string("model.embed_tokens.weight"));
        QVERIFY(m.notPlanned[1].second.find("embedding") != std::string::npos);
        for (const PlanTensor& t : m.tensors) {
            const std::int64_t rows = t.shape[0], cols = t.shape[1], n = rows * cols;
            for (std::size_t k = 0; k < candidates.size(); ++k) {
                const PlanCandidate& c = candidates[k];
                const PlanCell& cell = t.cells[k];
                const QString row = QString::fromStdString(t.name + " / " + c.name + ": " + cell.why);
                std::int64_t expected = -1; // codes + scales (bf16 like the weight; E4M3/E8M0 codes) + global
                if (c.name == "keep")
                    expected = n * 16;
                else if (c.name == "nvfp4")
                    expected = n * 4 + n / 16 * 8 + 32;
                else if (c.name == "mxfp4")
                    expected = n * 4 + n / 32 * 8;
                else if (c.name == "int8-channel" || c.name == "fp8-channel")
                    expected = n * 8 + rows * 16;
                else {
                    const std::int64_t g = std::stoll(c.name.substr(c.name.find('g') + 1));
                    expected = cols % g ? -1 : n * 4 + n / g * 16;
                }
                QVERIFY2(
                    cell.bits == expected,
                    qPrintable(row + QStringLiteral(" bits %1, expected %2").arg(cell.bits).arg(expected)));
                if (cell.bits < 0) {
                    QVERIFY2(!cell.why.empty(), qPrintable(row));
                    continue;
                }
                if (!c.spec) {
                    QCOMPARE(cell.error, 0.0);
                    continue;
                }
                const double sse = directError(request, *c.spec, t.name).error;
                QVERIFY2(std::abs(cell.error - sse) <= 1e-9 * sse, qPrintable(row));
                QVERIFY(cell.compressedTensors.contains("format"));
            }
        }
    }

    void importanceWeightsTheError() {
        JobRequest request = jobRequest(m_model, {});
        request.importance = Importance::open(m_stats);
        const PlanMeasurements m = measurePlan(request, {"model.layers.0.mlp.up_proj.weight"},
                                               planCandidatesNamed({"int4-g32", "keep"}));
        const PlanTensor& t = m.tensors.at(0);
        QVERIFY2(t.weighted, t.note.c_str());
        QVERIFY(t.note.find("stats.safetensors: model.layers.0.mlp.up_proj.weight") != std::string::npos);
        const double weighted = directError(request, *m.candidates[0].spec, t.name, m_sqMean[5]).error;
        QVERIFY2(std::abs(t.cells[0].error - weighted) <= 1e-5 * weighted,
                 qPrintable(QStringLiteral("%1 vs %2").arg(t.cells[0].error).arg(weighted)));
    }

    // An importance matrix llama.cpp wrote for the GGUF of this checkpoint weighs the Hugging Face
    // weights through the llama.cpp naming, with the means llama-quantize derives from the file.
    void llamaImatrixWeighsHuggingFaceWeights_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("gguf") << QStringLiteral("imatrix.gguf");
        QTest::newRow("legacy dat") << QStringLiteral("imatrix.dat");
    }
    void llamaImatrixWeighsHuggingFaceWeights() {
        QFETCH(QString, file);
        const std::string dir = QUANTLENS_SOURCE_DIR "/tests/data/imatrix/";
        const std::string imatrix = dir + file.toStdString();
        const auto expected = SafetensorsSource::openFile(imatrix + ".expected.safetensors");
        const std::vector<std::pair<std::string, std::string>> names = {
            {"blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"},
            {"blk.0.attn_k.weight", "model.layers.0.self_attn.k_proj.weight"},
            {"blk.0.ffn_up.weight", "model.layers.0.mlp.up_proj.weight"},
            {"blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"},
            {"blk.1.attn_q.weight", "model.layers.1.self_attn.q_proj.weight"}};
        std::mt19937_64 rng(3);
        std::normal_distribution<float> normal(0.0f, 0.05f);
        std::vector<NamedTensor> weights;
        for (const auto& [gguf, hf] : names) {
            const std::int64_t channels = expected->find(gguf)->shape.back();
            std::vector<float> w(static_cast<std::size_t>(24 * channels));
            for (float& v : w)
                v = normal(rng);
            weights.push_back({hf, Tensor::fromFloats({24, channels}, w)});
        }
        const std::string model = path("imatrix-model.safetensors");
        writeSafetensors(model, weights);
        JobRequest request = jobRequest(model, {});
        request.importance = Importance::open(imatrix);
        const PlanMeasurements m = measurePlan(request, selectTensors(*request.source, {{}, {}, true}),
                                               planCandidatesNamed({"int8-channel", "keep"}));
        QCOMPARE(m.tensors.size(), names.size());
        for (std::size_t t = 0; t < names.size(); ++t) {
            const PlanTensor& pt = m.tensors[t];
            QVERIFY2(pt.weighted, pt.note.c_str());
            QVERIFY(pt.note.find(names[t].first) != std::string::npos);
            const std::vector<float> f = expected->load(names[t].first).toFloatVector();
            const DirectError d = directError(request, *m.candidates[0].spec, pt.name, {f.begin(), f.end()});
            const double weighted = d.error;
            QVERIFY2(std::abs(pt.cells[0].error - weighted) <= 1e-9 * weighted, pt.name.c_str());
            QVERIFY(d.run.a.report.weighted.has_value()); // the job itself weighs it the same way
            QVERIFY(std::abs(d.run.a.report.weighted->sumWeightedSqError - weighted) <= 1e-9 * weighted);
        }
    }

    void weightedErrorAgainstDirectSums() {
        // Two experts of 3x4, NaN skipped, as ErrorStats skips it.
        const std::vector<float> x = {1,  2,  3,  4,  5,   6, 7, 8, 9, 10, 11, 12,
                                      -1, -2, -3, -4, NAN, 0, 1, 2, 3, 4,  5,  6};
        std::vector<float> xhat = x;
        for (float& v : xhat)
            v += 0.5f;
        const std::vector<float> s = {1, 2, 3, 4, 10, 20, 30, 40};
        const WeightedError w = weightedError(x, xhat, s, 4, 2);
        double err = 0, sig = 0;
        std::int64_t n = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (std::isnan(x[i])) continue;
            const double si = s[(i / 12) * 4 + i % 4];
            err += si * 0.25, sig += si * x[i] * x[i], ++n;
        }
        QCOMPARE(w.count, n);
        QCOMPARE(w.sumWeightedSqError, err);
        QCOMPARE(w.sumWeightedSqX, sig);
        QCOMPARE(w.sqnrDb(), 10 * std::log10(sig / err));
        QVERIFY_THROWS_EXCEPTION(QuantError, weightedError(x, xhat, s, 5, 2));
    }

    // A real model's measurements: the plan is the brute-force optimum at every budget.
    void modelPlanIsTheBruteForceOptimum() {
        JobRequest request = jobRequest(m_model, {});
        request.importance = Importance::open(m_stats);
        const PlanMeasurements m =
            measurePlan(request, selectTensors(*request.source, {{}, {}, true}),
                        planCandidatesNamed({"int4-g32", "int4-g128", "int8-channel", "keep"}));
        QCOMPARE(m.tensors.size(), std::size_t{7});
        Options o;
        for (const auto& t : m.tensors) {
            auto& row = o.emplace_back();
            for (const auto& c : t.cells)
                row.push_back({c.bits, c.bits < 0 ? INFINITY : c.error});
        }
        for (double bpw : {4.3, 4.5, 5.0, 6.0, 8.2, 12.0, 16.0}) {
            const PlanResult r = choosePlan(m, {bpw, 0});
            QVERIFY(r.bitsPerWeight(m) <= bpw);
            const double expected = bruteForce(o, r.budgetBits);
            QVERIFY2(
                std::abs(r.solution.error - expected) <= 1e-9 * std::max(expected, 1e-30),
                qPrintable(QStringLiteral("%1 bpw: %2 vs %3").arg(bpw).arg(r.solution.error).arg(expected)));
        }
        QVERIFY_THROWS_EXCEPTION(QuantError, choosePlan(m, {2.0, 0}));
        // A budget past any model's size is no limit (the widest plan), never a wrapped count; NaN is no
        // budget at all.
        const auto widest = choosePlan(m, {64.0, 0}).solution.choice;
        QCOMPARE(choosePlan(m, {1e14, 0}).solution.choice, widest);
        QCOMPARE(choosePlan(m, {1e308, 0}).solution.choice, widest);
        QCOMPARE(choosePlan(m, {0, std::int64_t{1} << 60}).solution.choice, widest);
        QVERIFY_THROWS_EXCEPTION(QuantError, choosePlan(m, {std::nan(""), 0}));
        // The same plan read back from its file, without measuring.
        const PlanResult r = choosePlan(m, {4.5, 0});
        const PlanMeasurements back =
            planMeasurementsFromJson(nlohmann::json::parse(planJson(m, r).dump()), "p.json");
        QCOMPARE(choosePlan(back, {4.5, 0}).solution.choice, r.solution.choice);
        auto broken = planJson(m, r);
        broken["tensors"][0]["cells"].erase(0);
        QVERIFY_THROWS_EXCEPTION(FileError, planMeasurementsFromJson(broken, "p.json"));
        QVERIFY_THROWS_EXCEPTION(FileError, planMeasurementsFromJson(nlohmann::json::array(), "p.json"));
        // Sizes a crafted plan file could make overflow the solver's sums are refused.
        for (const auto& [key, value] :
             {std::pair{"shape", nlohmann::json{1 << 30, 1 << 30}}, std::pair{"shape", nlohmann::json{4, -2}},
              std::pair{"shape", nlohmann::json::array()}}) {
            auto crafted = planJson(m, r);
            crafted["tensors"][0][key] = value;
            QVERIFY_THROWS_EXCEPTION(FileError, planMeasurementsFromJson(crafted, "p.json"));
        }
        auto crafted = planJson(m, r);
        crafted["tensors"][0]["cells"][0]["bits"] = std::int64_t{1} << 62;
        QVERIFY_THROWS_EXCEPTION(FileError, planMeasurementsFromJson(crafted, "p.json"));
    }

    void rulesAndRecipe() {
        const JobRequest request = jobRequest(m_model, {});
        const PlanMeasurements m = measurePlan(request, selectTensors(*request.source, {{}, {}, true}),
                                               planCandidatesNamed({"int4-g32", "int8-channel", "keep"}));
        const PlanResult r = choosePlan(m, {6.0, 0});
        // Rules: one per weight, each matching its llama.cpp name and no other.
        const PlanText rules = llamaTensorTypeRules(m, r);
        std::istringstream lines(rules.text);
        const std::vector<std::string> gguf = {"blk.0.attn_q.weight",   "blk.0.attn_k.weight",
                                               "blk.0.attn_v.weight",   "blk.0.attn_output.weight",
                                               "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight",
                                               "blk.0.ffn_down.weight"};
        std::size_t i = 0;
        for (std::string line; std::getline(lines, line); ++i) {
            const auto eq = line.rfind('=');
            const std::regex re(line.substr(0, eq));
            for (std::size_t j = 0; j < gguf.size(); ++j)
                QCOMPARE(std::regex_search(gguf[j], re), i == j);
            const std::string& chosenName = m.candidates[static_cast<std::size_t>(r.solution.choice[i])].name;
            const std::string type = line.substr(eq + 1);
            QCOMPARE(type, chosenName == "keep"       ? std::string("bf16")
                           : chosenName == "int4-g32" ? "q4_0"
                                                      : "q8_0");
        }
        QCOMPARE(i, gguf.size());
        // Recipe: YAML that names each quantized module once, the kept ones in ignore.
        if (!pythonHas(QStringLiteral("yaml"))) QSKIP("python3 with yaml is not available");
        const std::string recipe = path("recipe.yaml");
        writeFile(recipe, llmCompressorRecipe(m, r).text);
        QString err;
        const QByteArray out = runPython(
            {QStringLiteral("-c"),
             QStringLiteral("import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"),
             QString::fromStdString(recipe)},
            &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const auto y = parseJson(out)["quant_stage"]["quant_modifiers"]["QuantizationModifier"];
        std::map<std::string, std::string> got;
        for (const auto& [group, g] : y["config_groups"].items())
            for (const auto& target : g["targets"])
                got[target.get<std::string>()] = g["weights"].dump();
        for (const auto& name : y["ignore"])
            got[name.get<std::string>()] = "keep";
        for (std::size_t t = 0; t < m.tensors.size(); ++t) {
            const auto k = static_cast<std::size_t>(r.solution.choice[t]);
            const std::string module = m.tensors[t].name.substr(0, m.tensors[t].name.size() - 7);
            QVERIFY2(got.count(module), module.c_str());
            QCOMPARE(got[module], m.candidates[k].spec
                                      ? m.tensors[t].cells[k].compressedTensors["weights"].dump()
                                      : std::string("keep"));
        }
        QCOMPARE(got.size(), m.tensors.size());
    }

    // The export holds each weight in its chosen format; an independent reader dequantizes it.
    void exportIsTheChosenFormats() {
        JobRequest request = jobRequest(m_model, {});
        const PlanMeasurements m =
            measurePlan(request, selectTensors(*request.source, {{}, {}, true}),
                        planCandidatesNamed({"int4-g32", "int8-channel", "mxfp4", "keep"}));
        const PlanResult r = choosePlan(m, {6.5, 0});
        const std::string out = path("export/model.safetensors");
        std::filesystem::create_directories(path("export"));
        exportPlan(request, m, r, out);
        const auto config = nlohmann::json::parse(readFile(path("export/config.json")));
        const auto& qc = config["quantization_config"];
        std::set<std::string> formats;
        for (std::size_t t = 0; t < m.tensors.size(); ++t) {
            const auto k = static_cast<std::size_t>(r.solution.choice[t]);
            if (m.candidates[k].spec)
                formats.insert(m.tensors[t].cells[k].compressedTensors["format"].get<std::string>());
        }
        QVERIFY2(formats.size() > 1, "the test budget should mix formats");
        QCOMPARE(qc["format"].get<std::string>(), std::string("mixed-precision"));
        // Stored bytes are the plan's bits, tensor by tensor (the tensors not planned are kept as well).
        const auto src = SafetensorsSource::openFile(out);
        std::int64_t bits = 0;
        for (const auto& info : src->tensors()) {
            const bool planned = std::none_of(m.notPlanned.begin(), m.notPlanned.end(),
                                              [&](const auto& n) { return n.first == info.name; });
            if (info.name.find("_shape") == std::string::npos && planned)
                bits += static_cast<std::int64_t>(info.byteSize) * 8;
        }
        QCOMPARE(bits, r.solution.bits);
        if (!pythonHas(QStringLiteral("numpy, torch")))
            QSKIP("python3 with numpy and torch is not available");
        QString err;
        const QByteArray summary =
            runPython({pythonScript("ct_reader.py"), QStringLiteral("dequantize"),
                       QString::fromStdString(out), QString::fromStdString(path("xhat.safetensors"))},
                      &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        std::size_t quantized = 0;
        for (std::size_t t = 0; t < m.tensors.size(); ++t)
            quantized += m.candidates[static_cast<std::size_t>(r.solution.choice[t])].spec.has_value();
        QCOMPARE(parseJson(summary).size(), quantized);
    }

    // An entry that is zero on every input channel gives no weighted error, with the reason, rather
    // than 0/0 read as an infinite SQNR (which ranked the tensor best of all).
    void zeroImportanceGivesNoWeightedError() {
        ImportanceFile file;
        file.path = "stats.safetensors";
        file.entries["a.weight"].sqMean = {0.0f, 0.0f, 0.0f};
        file.entries["b.weight"].sqMean = {0.0f, 2.0f, 0.0f};
        const Importance importance(std::move(file));
        std::string why;
        QVERIFY(!importance.forTensor({"a.weight", DType::F32, {4, 3}, 48, ""},
                                      weightRole("a.weight", {4, 3}), why));
        QCOMPARE(why, std::string("importance entry 'a.weight' is zero on every input channel"));
        why.clear();
        const auto b = importance.forTensor({"b.weight", DType::F32, {4, 3}, 48, ""},
                                            weightRole("b.weight", {4, 3}), why);
        QVERIFY(b && why.empty());
        QCOMPARE(b->channels, std::int64_t{3});
    }

    // quantize --importance: the report carries the weighted error, reads back, ranks the table and
    // is gated by check.
    void quantizeReportsTheWeightedError() {
        const QString dir = m_dir.path();
        CliRun run =
            runCli({QStringLiteral("quantize"), QString::fromStdString(m_model), QStringLiteral("--all"),
                    QStringLiteral("--preset"), QStringLiteral("tensorrt"), QStringLiteral("--dtype"),
                    QStringLiteral("int4"), QStringLiteral("--block"), QStringLiteral("32"),
                    QStringLiteral("--importance"), QString::fromStdString(m_stats),
                    QStringLiteral("--report"), QStringLiteral("weighted.json"), QStringLiteral("-q")},
                   dir);
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(run.out.contains("w.SQNR dB"), run.out.constData());
        const auto report = nlohmann::json::parse(readFile(path("weighted.json")));
        std::vector<double> weighted;
        for (const auto& t : report["tensors"]) {
            if (!t.contains("stats")) continue;
            const TensorReport r = reportFromJson(t);
            if (r.name == "model.norm.weight" ||
                r.name == "model.embed_tokens.weight") { // nothing in the file
                QVERIFY(!r.weighted && r.importanceNote == "the importance file has no entry for it");
                continue;
            }
            QVERIFY2(r.weighted.has_value(), r.name.c_str());
            QCOMPARE(r.weighted->sqnrDb(), t["stats"]["weighted_sqnr_db"].get<double>());
            weighted.push_back(r.weighted->sqnrDb());
        }
        QCOMPARE(weighted.size(), std::size_t{7});
        // The table is ranked by it: its first row is the tensor with the lowest weighted SQNR.
        auto rows = modelRows(report["tensors"], "weighted.json");
        sortWorstFirst(rows);
        QCOMPARE(rows.front().weightedSqnrDb, *std::min_element(weighted.begin(), weighted.end()));
        const QString threshold = QString::number(*std::min_element(weighted.begin(), weighted.end()) + 0.01);
        run = runCli({QStringLiteral("check"), QStringLiteral("weighted.json"), QStringLiteral("--rule"),
                      QStringLiteral("weighted_sqnr < ") + threshold},
                     dir);
        QVERIFY2(run.code == 1, run.out.constData());
        run = runCli({QStringLiteral("check"), QStringLiteral("weighted.json"), QStringLiteral("--rule"),
                      QStringLiteral("weighted_sqnr < ") + QString::number(weighted.front() - 100)},
                     dir);
        QVERIFY2(run.code == 0, run.out.constData());
        // A weight the file has nothing for: said once, and no weighted figures.
        run = runCli({QStringLiteral("quantize"), QString::fromStdString(m_model), QStringLiteral("--tensor"),
                      QStringLiteral("model.norm.weight"), QStringLiteral("--importance"),
                      QString::fromStdString(m_stats), QStringLiteral("-q")},
                     dir);
        QVERIFY2(run.code == 0 && run.err.contains("no entry") && !run.out.contains("w.SQNR"),
                 run.err.constData());
    }

    void cli() {
        const QString dir = m_dir.path();
        const QString model = QString::fromStdString(m_model);
        const QStringList full = {QStringLiteral("plan"),
                                  model,
                                  QStringLiteral("--bits-per-weight"),
                                  QStringLiteral("5"),
                                  QStringLiteral("--importance"),
                                  QString::fromStdString(m_stats),
                                  QStringLiteral("--report"),
                                  QStringLiteral("plan.json"),
                                  QStringLiteral("--llama-rules"),
                                  QStringLiteral("rules.txt"),
                                  QStringLiteral("--recipe"),
                                  QStringLiteral("recipe.yaml"),
                                  QStringLiteral("--out"),
                                  QStringLiteral("cli/model.safetensors"),
                                  QStringLiteral("-q")};
        CliRun run = runCli(full, dir);
        QVERIFY2(run.code == 2 && run.err.contains("folder"),
                 run.err.constData()); // no such folder: nothing run
        QVERIFY(QDir(dir).mkpath(QStringLiteral("cli")));
        // No output over an input or over another output: nothing is run, nothing written.
        for (const auto& [flag, target] : {std::pair{"--report", m_stats}, std::pair{"--recipe", m_model}}) {
            QStringList over = full;
            over[over.indexOf(QString::fromUtf8(flag)) + 1] = QString::fromStdString(target);
            run = runCli(over, dir);
            QVERIFY2(run.code != 0 && !run.err.isEmpty(), flag);
        }
        QStringList twice = full;
        twice[twice.indexOf(QStringLiteral("--recipe")) + 1] = QStringLiteral("rules.txt");
        run = runCli(twice, dir);
        QVERIFY2(run.code == 1 && run.err.contains("same file"), run.err.constData()); // core/io/run_files
        QVERIFY(!QFile::exists(dir + QStringLiteral("/rules.txt")));
        run = runCli(full, dir);
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(run.out.contains("plan: ") && run.out.contains("importance-weighted"), run.out.constData());
        for (const char* f :
             {"plan.json", "rules.txt", "recipe.yaml", "cli/model.safetensors", "cli/config.json"})
            QVERIFY2(QFile::exists(dir + QLatin1Char('/') + QString::fromUtf8(f)), f);
        const auto plan = nlohmann::json::parse(readFile(path("plan.json")));
        QVERIFY(plan["bits_per_weight"].get<double>() <= 5.0);
        // Re-planned from the file for another budget, without the model's measurements redone.
        run = runCli({QStringLiteral("plan"), QStringLiteral("--from"), QStringLiteral("plan.json"),
                      QStringLiteral("--bits-per-weight"), QStringLiteral("8"), QStringLiteral("--report"),
                      QStringLiteral("plan8.json")},
                     dir);
        QVERIFY2(run.code == 0, run.err.constData());
        const auto plan8 = nlohmann::json::parse(readFile(path("plan8.json")));
        QVERIFY(plan8["error"].get<double>() <= plan["error"].get<double>());
        QCOMPARE(plan8["tensors"], plan["tensors"]);
        // Mistakes: no budget, unknown candidate, malformed custom one, budget below any plan.
        QCOMPARE(runCli({QStringLiteral("plan"), model}, dir).code, 2);
        run = runCli({QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"), QStringLiteral("5"),
                      QStringLiteral("--candidates"), QStringLiteral("int4-g32,int3")},
                     dir);
        QVERIFY2(run.code == 2 && run.err.contains("int3"), run.err.constData());
        run = runCli({QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"), QStringLiteral("5"),
                      QStringLiteral("--candidate"), QStringLiteral("wide --dtype int4")},
                     dir);
        QVERIFY2(run.code == 2 && run.err.contains("NAME: SPEC FLAGS"), run.err.constData());
        run = runCli({QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"), QStringLiteral("2"),
                      QStringLiteral("--candidates"), QStringLiteral("int4-g32,keep"), QStringLiteral("-q")},
                     dir);
        QVERIFY2(run.code == 1 && run.err.contains("no plan fits the budget"), run.err.constData());
        // The only candidate fits no weight: said so, not "stores nan bits per weight".
        run = runCli({QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"), QStringLiteral("5"),
                      QStringLiteral("--candidate"),
                      QStringLiteral("odd: --preset tensorrt --dtype int4 --block 7"), QStringLiteral("-q")},
                     dir);
        QVERIFY2(run.code == 1 && run.err.contains("no format that fits it") && !run.err.contains("nan"),
                 run.err.constData());
        // --help inside a candidate is not one of the spec's flags (not CLI11's internal message).
        run = runCli({QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"), QStringLiteral("5"),
                      QStringLiteral("--candidate"), QStringLiteral("h: --preset torch --help")},
                     dir);
        QVERIFY2(run.code == 2 && run.err.contains("--help") && !run.err.contains("main function"),
                 run.err.constData());
        // A custom candidate joins the defaults named.
        // (blocks of 256 fit five of the seven weights; the other two stay 16-bit: 8.04 bits at least)
        run = runCli({QStringLiteral("plan"), model, QStringLiteral("--bits-per-weight"), QStringLiteral("9"),
                      QStringLiteral("--candidates"), QStringLiteral("keep"), QStringLiteral("--candidate"),
                      QStringLiteral("int4-g256: --preset tensorrt --dtype int4 --block 256"),
                      QStringLiteral("-q")},
                     dir);
        QVERIFY2(run.code == 0 && run.out.contains("int4-g256"), run.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestPlan)
#include "tst_plan.moc"
