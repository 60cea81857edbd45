// quantlens-cli evaluate: the float model and the quantized one through ONNX Runtime.
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/job_request.h"
#include "cli/progress.h"
#include "io/atomic_file.h"
#include "io/safetensors_writer.h"
#include "runtime/evaluate_job.h"
#include "runtime/ort_abi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace ql::cli {
namespace {

void checkOutputPath(const std::string& path, const char* flag, const char* ext) {
    if (path.empty()) return;
    if (std::filesystem::path(path).extension() != ext)
        throw UsageError(std::string(flag) + " " + path + ": use a " + ext + " file name");
    std::error_code ec;
    const auto folder = std::filesystem::absolute(path).parent_path();
    if (!std::filesystem::is_directory(folder, ec))
        throw UsageError(path + ": the folder " + folder.string() + " does not exist");
}

std::string db(double v) {
    char buf[32];
    if (std::isinf(v)) return "inf";
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}
std::string num(double v, const char* fmt = "%.6g") {
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

nlohmann::json metricsJson(const ErrorMetrics& m) {
    nlohmann::json j{
        {"cosine", m.cosine}, {"max_abs", m.maxAbs}, {"count", m.count}, {"non_finite", m.nonFinite}};
    j["sqnr_db"] = std::isinf(m.sqnrDb) ? nlohmann::json("inf") : nlohmann::json(m.sqnrDb);
    return j;
}

nlohmann::json reportJson(const EvaluateOptions& o, const EvaluateOutcome& r, const std::string& model) {
    nlohmann::json j;
    j["model"] = model;
    j["runtime"] = r.runtime;
    j["samples"] = r.samples;
    j["inputs"] = {{"generated", r.generated}, {"notes", r.inputNotes}};
    if (!o.inputs.empty()) j["inputs"]["file"] = o.inputs;
    if (r.generated) j["inputs"]["seed"] = o.seed;
    if (!r.against.empty()) j["against"] = r.against;
    j["weights"] = {{"quantized", r.quantized}, {"total", r.weights.size()}};
    for (const auto& w : r.weights)
        if (!w.quantized())
            j["weights"]["not_quantized"].push_back(
                {{"name", w.name}, {"reason", w.error.empty() ? w.passedThrough : w.error}});
    for (const auto& out : r.outputs) {
        nlohmann::json x{{"name", out.name}, {"type", out.type}, {"shape", out.shape}};
        if (out.error.count > 0) x["error"] = metricsJson(out.error);
        if (out.classes) {
            x["classes"] = {
                {"rows", out.rows},
                {"top1_agreement", out.top1},
                {"kl_divergence", out.kl},
                {"probabilities", out.softmaxed ? "softmax of the scores" : "the scores as given"}};
            if (out.top5) x["classes"]["top5_agreement"] = *out.top5;
        }
        j["outputs"].push_back(x);
    }
    j["layers"] = nlohmann::json::array();
    for (const auto& l : r.layers) {
        nlohmann::json x{{"output", l.output},
                         {"node", l.node},
                         {"op_type", l.opType},
                         {"weights", l.weights},
                         {"cumulative", metricsJson(l.cumulative)}};
        if (l.local) x["local"] = metricsJson(*l.local);
        j["layers"].push_back(x);
    }
    if (o.activations) {
        j["activations"] = nlohmann::json::array();
        for (const auto& a : r.activations)
            j["activations"].push_back(
                {{"weight", a.weight}, {"input", a.input}, {"positions", a.positions}});
        for (const auto& [weight, why] : r.activationsSkipped)
            j["activations_skipped"].push_back({{"weight", weight}, {"why", why}});
    }
    if (o.sensitivity) {
        j["sensitivity"] = nlohmann::json::array();
        for (std::size_t i = 0; i < r.sensitivity.size(); ++i)
            j["sensitivity"].push_back({{"rank", i + 1},
                                        {"weight", r.sensitivity[i].weight},
                                        {"output", metricsJson(r.sensitivity[i].output)}});
    }
    return j;
}

// Each output over the samples as "float/<name>" and "quantized/<name>" (float32 as it came, other
// numeric types as float64).
void saveOutputs(const std::string& path, const EvaluateOutcome& r, const std::string& model) {
    std::vector<NamedTensor> tensors;
    for (const auto* side : {&r.floatOutputs, &r.quantizedOutputs})
        for (const HostTensor& h : *side) {
            if (ortElementSize(h.type) == 0) continue;
            const std::string name = (side == &r.floatOutputs ? "float/" : "quantized/") + h.name;
            if (h.type == ort::kFloat) {
                Tensor t(DType::F32, h.shape);
                std::copy(h.bytes.begin(), h.bytes.end(), t.mutableData());
                tensors.push_back({name, std::move(t)});
            } else {
                const auto v = h.toDoubles();
                Tensor t(DType::F64, h.shape);
                std::memcpy(t.mutableData(), v.data(), v.size() * sizeof(double));
                tensors.push_back({name, std::move(t)});
            }
        }
    writeSafetensors(path, tensors, {{"quantlens", "evaluate outputs of " + model}}, model);
}

} // namespace

void addSampleOptions(CLI::App& cmd, EvaluateOptions& o, std::vector<std::string>& dims) {
    cmd.add_option("--inputs", o.inputs,
                   "Named input tensors (.safetensors or .npz from np.savez), first axis the samples")
        ->group("INPUTS");
    cmd.add_option("--random", o.random,
                   "Generate N samples (standard normal) from the model's input shapes; they measure less "
                   "than real inputs do")
        ->check(CLI::Range(1, 1000000))
        ->group("INPUTS");
    cmd.add_option("--seed", o.seed, "Seed for --random")->capture_default_str()->group("INPUTS");
    cmd.add_option("--dim", dims, "A dynamic input dimension for --random, NAME=N (repeatable)")
        ->group("INPUTS");
}

void parseSampleOptions(EvaluateOptions& o, const std::vector<std::string>& dims) {
    if (o.inputs.empty() == (o.random == 0))
        throw UsageError("give the inputs with exactly one of --inputs or --random");
    if (!dims.empty() && o.random == 0) throw UsageError("--dim goes with --random");
    for (const auto& d : dims) {
        const auto eq = d.rfind('=');
        std::int64_t n = 0;
        try {
            n = eq == std::string::npos ? 0 : std::stoll(d.substr(eq + 1));
        } catch (const std::exception&) {
        }
        if (eq == std::string::npos || eq == 0 || n <= 0)
            throw UsageError("--dim " + d + ": write NAME=N with N a positive integer");
        o.dims[d.substr(0, eq)] = n;
    }
}

CLI::App* addEvaluate(CLI::App& parent, EvaluateOptions& o, EvaluateCliOptions& c) {
    auto* cmd = parent.add_subcommand(
        "evaluate",
        "Run an ONNX model through ONNX Runtime as it is and with its weights quantized (then dequantized) "
        "by "
        "the SPEC, on the same inputs: each output's SQNR, cosine, max |diff| (class scores: top-1/top-5 "
        "agreement and KL divergence), and every layer's error with all weights quantized (cumulative) and "
        "with "
        "only its own (local). Needs ONNX Runtime: $QUANTLENS_ONNXRUNTIME, a Python onnxruntime or Node "
        "onnxruntime-node package, or the system's library (scripts/setup-onnxruntime.sh fetches it).");
    cmd->add_option("MODEL", c.model, "ONNX model (.onnx)")->required();
    addSpecOptions(*cmd, c.spec);
    cmd->add_option("--backend", c.backend, "Backend to quantize on")->capture_default_str();
    addSampleOptions(*cmd, o, c.dims);
    cmd->add_option("--against", o.against,
                    "Take the quantized side from this model (the same graph with its weights quantized, "
                    "e.g. a QDQ export from `quantize --out q.onnx`), run by the runtime as it is");
    cmd->add_flag("--sensitivity", o.sensitivity,
                  "Quantize one weight at a time and rank the weights by the outputs' error (one run of "
                  "the model per weight and sample)");
    cmd->add_flag("--no-local", c.noLocal, "Skip the per-layer local runs (one run per weighted node)");
    cmd->add_option("--layers", c.layers, "Layers printed, worst cumulative SQNR first (the report has all)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--report", c.report, "Write the report (.json)");
    cmd->add_option(
        "--save-outputs", c.saveOutputs,
        "Write each output of both models over the samples (.safetensors: float/NAME, quantized/NAME)");
    cmd->add_option("--activations", c.activations,
                    "Write each weight's input statistics from the float run (.safetensors of "
                    "WEIGHT.input_sq_mean, MODULE.input_sq_mean for a MODULE.weight: E[x^2] per input "
                    "channel of the data its node reads, axis 1 for "
                    "Conv, the last axis for MatMul/Gemm), for quantize/plan --importance");
    cmd->add_flag("--quiet,-q", c.quiet, "No progress bar");
    return cmd;
}

int runEvaluate(EvaluateOptions o, const EvaluateCliOptions& c) {
    checkOutputPath(c.report, "--report", ".json");
    checkOutputPath(c.saveOutputs, "--save-outputs", ".safetensors");
    checkOutputPath(c.activations, "--activations", ".safetensors");
    if (!c.report.empty() && c.report == c.saveOutputs)
        throw UsageError("--report and --save-outputs name one file");
    if (!c.activations.empty() && c.activations == c.saveOutputs)
        throw UsageError("--activations and --save-outputs name one file");
    o.activations = !c.activations.empty();
    parseSampleOptions(o, c.dims);
    o.local = !c.noLocal;
    if (o.sensitivity && !o.against.empty())
        throw UsageError("--sensitivity quantizes the model's own weights; it does not go with --against");
    o.announce = [&](const std::string& cost) {
        if (!c.quiet || o.sensitivity) std::fprintf(stderr, "quantlens-cli: evaluate: %s\n", cost.c_str());
    };
    const JobRequest request = makeRequest(c.model, c.spec, c.backend);
    RunFiles files;
    if (!o.inputs.empty()) files.input(o.inputs, "--inputs");
    if (!o.against.empty()) files.input(o.against, "--against");
    refuseOutputsOverInputs(
        request,
        {{c.report, "--report"}, {c.saveOutputs, "--save-outputs"}, {c.activations, "--activations"}}, files);

    ProgressPrinter progress(c.quiet);
    progress.begin(1, 1, "evaluate " + c.model);
    const EvaluateOutcome r = runEvaluateJob(request, o, progress.callback());
    progress.finish();

    std::printf("%s\n", r.runtime.c_str());
    std::printf("inputs: %d sample%s; %s\n", r.samples, r.samples == 1 ? "" : "s",
                r.inputNotes.empty() ? "" : r.inputNotes.front().c_str());
    for (std::size_t i = 1; i < r.inputNotes.size(); ++i)
        std::printf("        %s\n", r.inputNotes[i].c_str());
    if (r.generated)
        std::fprintf(stderr,
                     "quantlens-cli: note: the inputs were generated (standard normal, seed %llu): they "
                     "measure less than real inputs do; give real ones with --inputs FILE\n",
                     static_cast<unsigned long long>(o.seed));
    if (r.against.empty())
        std::printf("weights: %d of %zu quantized\n", r.quantized, r.weights.size());
    else
        std::printf("quantized side: %s, as the runtime runs it\n", r.against.c_str());
    for (const auto& w : r.weights)
        if (!w.quantized())
            std::printf("  not quantized: %s: %s\n", oneLine(w.name).c_str(),
                        oneLine(w.error.empty() ? w.passedThrough : w.error).c_str());
    std::printf("\noutputs:\n%-28s %-16s %9s %10s %11s %7s %7s %10s\n", "output", "shape", "SQNR dB",
                "cosine", "max|diff|", "top-1", "top-5", "KL");
    for (const auto& out : r.outputs) {
        if (out.error.count == 0) {
            std::printf("%-28s %-16s (%s: not compared)\n", oneLine(out.name).c_str(),
                        toString(out.shape).c_str(), out.type.c_str());
            continue;
        }
        std::printf("%-28s %-16s %9s %10s %11s", oneLine(out.name).c_str(), toString(out.shape).c_str(),
                    db(out.error.sqnrDb).c_str(), num(out.error.cosine, "%.6f").c_str(),
                    num(out.error.maxAbs).c_str());
        if (out.classes)
            std::printf(" %6.1f%% %7s %10s  (%s, %lld rows)", 100 * out.top1,
                        out.top5 ? (num(100 * *out.top5, "%.1f") + "%").c_str() : "-", num(out.kl).c_str(),
                        out.softmaxed ? "softmax of the scores" : "scores already sum to 1",
                        static_cast<long long>(out.rows));
        std::printf("\n");
    }
    std::vector<const LayerMetrics*> worst;
    for (const auto& l : r.layers)
        worst.push_back(&l);
    std::stable_sort(worst.begin(), worst.end(), [](const LayerMetrics* a, const LayerMetrics* b) {
        return a->cumulative.sqnrDb < b->cumulative.sqnrDb;
    });
    if (worst.size() > static_cast<std::size_t>(c.layers)) worst.resize(static_cast<std::size_t>(c.layers));
    std::printf("\nlayers (%zu of %zu, worst cumulative SQNR first):\n%-36s %-18s %12s %10s %12s\n",
                worst.size(), r.layers.size(), "output", "op", "cumul. dB", "cosine", "local dB");
    for (const LayerMetrics* l : worst)
        std::printf("%-36s %-18s %12s %10s %12s\n", oneLine(l->output).c_str(), l->opType.c_str(),
                    db(l->cumulative.sqnrDb).c_str(), num(l->cumulative.cosine, "%.6f").c_str(),
                    l->local ? db(l->local->sqnrDb).c_str() : "-");
    if (o.sensitivity) {
        const std::size_t shown = std::min(r.sensitivity.size(), static_cast<std::size_t>(c.layers));
        std::printf("\nsensitivity (%zu of %zu weights, only that weight quantized; the most sensitive "
                    "first):\n%5s %-40s %12s %10s %11s\n",
                    shown, r.sensitivity.size(), "rank", "weight", "output dB", "cosine", "max|diff|");
        for (std::size_t i = 0; i < shown; ++i) {
            const auto& w = r.sensitivity[i];
            std::printf("%5zu %-40s %12s %10s %11s\n", i + 1, oneLine(w.weight).c_str(),
                        db(w.output.sqnrDb).c_str(), num(w.output.cosine, "%.6f").c_str(),
                        num(w.output.maxAbs).c_str());
        }
    }
    if (!c.saveOutputs.empty()) saveOutputs(c.saveOutputs, r, c.model);
    if (o.activations) {
        writeActivationStats(
            c.activations, r.activations,
            o.inputs.empty() ? "generated (standard normal, seed " + std::to_string(o.seed) + ")" : o.inputs,
            r.samples, c.model);
        std::printf("\nactivations: %zu weights' input_sq_mean written to %s\n", r.activations.size(),
                    c.activations.c_str());
        for (const auto& [weight, why] : r.activationsSkipped)
            std::printf("  none for %s: %s\n", oneLine(weight).c_str(), oneLine(why).c_str());
    }
    if (!c.report.empty()) {
        const std::string text = reportJson(o, r, c.model).dump(2) + "\n";
        AtomicFile file(c.report, c.model);
        file.write(text.data(), text.size());
        file.commit();
    }
    return 0;
}

} // namespace ql::cli
