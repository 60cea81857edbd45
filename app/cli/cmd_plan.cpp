#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/job_request.h"
#include "cli/progress.h"
#include "io/atomic_file.h"
#include "job/plan_output.h"
#include "job/report_parts.h"
#include "job/tensor_measurement.h"
#include "report/model_table.h"
#include "runtime/output_objective.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

namespace ql::cli {
namespace {

// "NAME: FLAGS", FLAGS being the SPEC flags of quantize.
PlanCandidate parseCandidate(const std::string& text) {
    const auto colon = text.find(':');
    std::string name = text.substr(0, colon);
    name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
    if (colon == std::string::npos || name.empty())
        throw UsageError(
            "--candidate expects 'NAME: SPEC FLAGS' (e.g. 'int4-g256: --preset tensorrt --dtype int4 "
            "--block 256'), got '" +
            text + "'");
    CLI::App parser{"candidate"};
    parser.set_help_flag(); // a spec's flags only: --help there is not a flag of the spec
    SpecOptions spec;
    addSpecOptions(parser, spec);
    try {
        parser.parse(text.substr(colon + 1), false);
    } catch (const CLI::ParseError& e) {
        throw UsageError("--candidate " + name + ": " + e.what());
    }
    if (!spec.scale.empty() || !spec.groupIndex.empty())
        throw UsageError("--candidate " + name +
                         ": a candidate calibrates itself (no --scale, --group-index)");
    PlanCandidate c{name, buildSpec(spec), "", false, spec.axis.empty()}; // --axis: every weight, as given
    // The nearest llama.cpp type: 8-bit codes q8_0, FP4 in MX blocks mxfp4, any other sub-byte code q4_K.
    c.ggmlType = !isSubByte(c.spec->target) ? "q8_0" : (c.spec->preset == Preset::MX ? "mxfp4" : "q4_K");
    return c;
}

std::vector<PlanCandidate> candidatesOf(const PlanOptions& o) {
    std::vector<PlanCandidate> out;
    if (!o.candidates.empty()) {
        std::vector<std::string> names;
        std::stringstream list(o.candidates);
        for (std::string n; std::getline(list, n, ',');)
            names.push_back(n);
        try {
            out = planCandidatesNamed(names);
        } catch (const QuantError& e) {
            throw UsageError("--candidates: " + std::string(e.what()));
        }
    } else if (o.custom.empty()) {
        out = defaultPlanCandidates();
    }
    for (const auto& text : o.custom)
        out.push_back(parseCandidate(text));
    for (std::size_t i = 0; i < out.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (out[i].name == out[j].name)
                throw UsageError("two candidates are named '" + out[i].name + "'");
    return out;
}

std::string formatted(const char* fmt, double v) {
    char text[64];
    std::snprintf(text, sizeof text, fmt, v);
    return text;
}

void printPlan(const PlanMeasurements& m, const PlanResult& r) {
    // Names and candidates may come from a plan file (--from): printed escaped.
    std::size_t width = 6;
    for (const auto& t : m.tensors)
        width = std::max(width, printable(t.name).size());
    std::printf("%-*s  %-14s %9s %10s %12s\n", static_cast<int>(width), "tensor", "format", "bits/w",
                "SQNR dB",
                !m.outputObjective.empty() ? "out. sq. err"
                : m.importance.empty()     ? "sq. error"
                                           : "w. sq. error");
    for (std::size_t t = 0; t < m.tensors.size(); ++t) {
        const PlanTensor& pt = m.tensors[t];
        const auto k = static_cast<std::size_t>(r.solution.choice[t]);
        const PlanCell& c = pt.cells[k];
        std::printf("%-*s  %-14s %9s %10s %12s\n", static_cast<int>(width), printable(pt.name).c_str(),
                    printable(m.candidates[k].name).c_str(),
                    formatted("%.3f", static_cast<double>(c.bits) / static_cast<double>(pt.elements)).c_str(),
                    tableNumber(c.sqnrDb, "%.2f").c_str(), formatted("%.4g", c.error).c_str());
    }
    const double budget = static_cast<double>(r.budgetBits) / static_cast<double>(m.elements());
    std::printf("\nplan: %.4f bits per weight (budget %.4f) over %zu weights, %lld bytes; total %s %.6g\n",
                r.bitsPerWeight(m), budget, m.tensors.size(), static_cast<long long>(r.solution.bits / 8),
                !m.outputObjective.empty() ? "squared output error"
                : m.importance.empty()     ? "squared error"
                                           : "importance-weighted squared error",
                r.solution.error);
    std::printf(
        "the least total error of any choice within the budget%s; the front has %zu points from %.3f to "
        "%.3f bits per weight\n",
        r.solution.exact
            ? " (exact)"
            : (" (bits counted in units of " + std::to_string(r.solution.unitBits) + ", rounded up)").c_str(),
        r.front.size(), r.front.empty() ? NAN : static_cast<double>(r.front.front().bits) / m.elements(),
        r.front.empty() ? NAN : static_cast<double>(r.front.back().bits) / m.elements());
    if (m.notPlanned.empty()) return;
    std::printf("\nkept as they are (%zu, not planned):\n", m.notPlanned.size());
    for (const auto& [name, why] : m.notPlanned)
        std::printf("  %s: %s\n", printable(name).c_str(), oneLine(why).c_str());
}

} // namespace

CLI::App* addPlan(CLI::App& parent, PlanOptions& o) {
    auto* cmd = parent.add_subcommand(
        "plan",
        "Choose a format per weight under a size budget: measure each weight (Linear, conv, recurrent; any "
        "name) under every candidate format along its role's axes (the target operator's arithmetic), then "
        "pick the choice with the least total squared error (importance-weighted with --importance) whose "
        "stored size fits the budget. Biases, norms, scalars and embedding tables are kept and listed. "
        "Exports the plan as llama.cpp --tensor-type rules, an llm-compressor recipe and a "
        "compressed-tensors checkpoint (with --out, only the formats a checkpoint stores are chosen).");
    cmd->add_option("FILE", o.file,
                    "Model file (safetensors, HDF5 or GGUF); with --from, the plan's file by default");
    cmd->add_option("--tensor", o.tensors, "Tensor name (repeatable)")->group("TENSORS");
    cmd->add_option("--match", o.match,
                    "Every tensor whose name matches this regular expression (default: every weight)")
        ->group("TENSORS");
    addIncludeNonWeightsOption(*cmd, o.includeNonWeights);
    cmd->add_option(
           "--candidates", o.candidates,
           "Formats to choose from, comma-separated (default all): " +
               [] {
                   std::string s;
                   for (const auto& c : defaultPlanCandidates())
                       s += (s.empty() ? "" : ", ") + c.name;
                   return s;
               }())
        ->group("PLAN");
    cmd->add_option(
           "--candidate", o.custom,
           "Another format, as 'NAME: SPEC FLAGS', e.g. 'int4-g256: --preset tensorrt --dtype int4 --block "
           "256' (repeatable)")
        ->group("PLAN");
    auto* bpw =
        cmd->add_option("--bits-per-weight", o.bitsPerWeight, "Budget: average bits per planned weight")
            ->check(CLI::PositiveNumber)
            ->group("PLAN");
    auto* size = cmd->add_option("--size", o.bytes, "Budget: total bytes of the planned weights")
                     ->check(CLI::PositiveNumber)
                     ->group("PLAN");
    bpw->excludes(size);
    addImportanceOption(*cmd, o.importance);
    cmd->add_option("--objective", o.objective,
                    "What a choice's error is: weights (each weight's squared error, importance-weighted "
                    "with --importance) or output (an ONNX model's output error, measured through ONNX "
                    "Runtime with only that weight quantized by that candidate: one model run per weight, "
                    "candidate and sample; needs --inputs or --random)")
        ->check(CLI::IsMember({"weights", "output"}))
        ->capture_default_str()
        ->group("PLAN");
    addSampleOptions(*cmd, o.samples, o.dims);
    cmd->add_option("--from", o.from,
                    "Re-plan from a plan file (--report of an earlier run) without measuring")
        ->group("PLAN");
    cmd->add_option("--backend", o.backend, "Backend to run on (`quantlens-cli backends` lists this build's)")
        ->capture_default_str();
    cmd->add_option("--report", o.report, "Write the plan file (.json): measurements, choice and front")
        ->group("OUTPUT");
    cmd->add_option("--llama-rules", o.llamaRules, "Write llama-quantize --tensor-type-file rules")
        ->group("OUTPUT");
    cmd->add_option("--recipe", o.recipe, "Write an llm-compressor recipe (.yaml)")->group("OUTPUT");
    cmd->add_option("--out", o.out, "Write the weights as a compressed-tensors checkpoint (.safetensors)")
        ->group("OUTPUT");
    cmd->add_flag("--quiet,-q", o.quiet, "No progress bar");
    return cmd;
}

int runPlan(const PlanOptions& o) {
    if (o.bitsPerWeight <= 0 && o.bytes <= 0)
        throw UsageError("plan needs a budget: --bits-per-weight or --size");
    if (!o.from.empty() && (!o.importance.empty() || !o.candidates.empty() || !o.custom.empty() ||
                            !o.tensors.empty() || !o.match.empty() || o.includeNonWeights))
        throw UsageError(
            "--from re-plans the measurements it holds: no --importance, --candidates, --candidate, "
            "--tensor, --match or --include-non-weights with it");
    const bool outputObjective = o.objective == "output";
    EvaluateOptions samples = o.samples;
    if (outputObjective) {
        if (!o.from.empty())
            throw UsageError("--objective output measures the model; --from re-plans without measuring");
        if (!o.importance.empty())
            throw UsageError("--objective output measures the model's outputs themselves: no --importance");
        if (std::filesystem::path(o.file).extension() != ".onnx")
            throw UsageError(
                "--objective output runs the model through ONNX Runtime: FILE is an .onnx model");
        parseSampleOptions(samples, o.dims);
    } else if (!samples.inputs.empty() || samples.random > 0 || !o.dims.empty()) {
        throw UsageError("--inputs, --random and --dim go with --objective output");
    }
    if (o.from.empty() && o.file.empty()) throw UsageError("plan needs FILE (or --from PLAN.json)");
    if (!o.tensors.empty() && !o.match.empty())
        throw UsageError("choose the tensors with --tensor or --match, not both");
    if (!o.out.empty() && std::filesystem::path(o.out).extension() != ".safetensors")
        throw UsageError("--out " + o.out + ": a compressed-tensors checkpoint is a .safetensors file");
    if (!o.report.empty() && std::filesystem::path(o.report).extension() != ".json")
        throw UsageError("--report " + o.report + ": the plan file is .json");

    for (const std::string& out : {o.report, o.llamaRules, o.recipe, o.out}) { // before an hour of measuring
        if (out.empty()) continue;
        std::error_code ec;
        const auto folder = std::filesystem::absolute(out).parent_path();
        if (!std::filesystem::is_directory(folder, ec))
            throw UsageError(out + ": the folder " + folder.string() + " does not exist");
    }
    PlanMeasurements m;
    std::string file = o.file;
    if (!o.from.empty()) {
        m = planMeasurementsFromJson(readReportFile(o.from), o.from);
        if (file.empty()) file = m.file;
    }
    JobRequest request = makeRequest(file, {}, o.backend, 1, o.importance);
    // Never over an input (the model, the importance file, the plan re-planned from) or another output.
    RunFiles files;
    files.input(o.from, "the plan being re-planned");
    files.input(samples.inputs, "--inputs");
    refuseOutputsOverInputs(
        request,
        {{o.report, "--report"}, {o.llamaRules, "--llama-rules"}, {o.recipe, "--recipe"}, {o.out, "--out"}},
        files);
    ProgressPrinter progress(o.quiet);
    ModelEvents events;
    events.started = [&](int index, int total, const std::string& tensor) {
        progress.begin(index, total, tensor);
    };
    events.progress = progress.callback();
    if (o.from.empty()) {
        std::vector<std::string> names;
        try {
            names =
                selectTensors(*request.source, {o.tensors, o.match, o.tensors.empty() && o.match.empty()});
        } catch (const FileError&) {
            throw;
        } catch (const QuantError& e) {
            throw UsageError("--match: " + std::string(e.what()));
        }
        const std::vector<PlanCandidate> candidates = candidatesOf(o);
        PlanScope scope{.includeNonWeights = o.includeNonWeights || !o.tensors.empty(), // named: as asked
                        .compressedTensorsOnly = !o.out.empty()};
        ModelEvents measuring = events;
        std::unique_ptr<OutputObjective> objective;
        std::size_t runsPerWeight = 0, runsDone = 0;
        if (outputObjective) {
            objective = std::make_unique<OutputObjective>(file, samples);
            for (const auto& c : candidates)
                runsPerWeight += c.spec.has_value(); // keep changes nothing: no run
            std::size_t weights = 0;
            for (const auto& name : names)
                weights +=
                    whyNotPlanned(*request.source, requireTensor(*request.source, name), scope).empty();
            std::fprintf(stderr,
                         "quantlens-cli: plan: --objective output: up to %zu weights x %zu candidates = %zu "
                         "runs of the model, each over %d sample%s (%s)\n",
                         weights, runsPerWeight, weights * runsPerWeight, objective->samples(),
                         objective->samples() == 1 ? "" : "s", objective->runtime().c_str());
            if (objective->generated())
                std::fprintf(stderr,
                             "quantlens-cli: note: the inputs were generated (standard normal): they measure "
                             "less than real inputs do; give real ones with --inputs FILE\n");
            scope.objective = "sum over the weights of the squared output error with only that weight "
                              "quantized (" +
                              std::to_string(objective->samples()) + " samples " +
                              (samples.inputs.empty() ? "generated, seed " + std::to_string(samples.seed)
                                                      : "from " + samples.inputs) +
                              ")";
            // The bar counts the model runs of the weight being measured.
            measuring.started = [&](int index, int total, const std::string& tensor) {
                runsDone = 0;
                progress.begin(index, total, tensor);
            };
            measuring.progress = [](double) { return true; };
            const ProgressFn bar = progress.callback();
            scope.outputError = [&, bar](const TensorInfo& info, const std::vector<float>& values) {
                const double error = objective->squaredError(info.name, values);
                reportProgress(bar, static_cast<double>(++runsDone) / static_cast<double>(runsPerWeight));
                return error;
            };
        }
        m = measurePlan(request, names, candidates, measuring, scope);
        progress.finish();
    }
    const PlanResult r = choosePlan(m, {o.bitsPerWeight, o.bytes});
    printPlan(m, r);
    for (const auto& note : planNotes(m, file))
        std::fprintf(stderr, "quantlens-cli: note: %s\n", oneLine(note).c_str());
    // Everything is checked and made before any output exists: the texts wait in their temporaries
    // while the weights are quantized and exported, and are committed only when the export is. A
    // failure anywhere leaves no output of this run behind.
    if (!o.out.empty()) checkPlanFits(*request.source, m, r);
    std::vector<std::unique_ptr<AtomicFile>> texts;
    auto stage = [&](const std::string& path, const std::string& text) {
        texts.push_back(std::make_unique<AtomicFile>(path, file));
        texts.back()->write(text.data(), text.size());
    };
    if (!o.report.empty()) stage(o.report, planJson(m, r).dump(1) + "\n");
    if (!o.llamaRules.empty()) {
        const PlanText rules = llamaTensorTypeRules(m, r);
        for (const auto& note : rules.notes)
            std::fprintf(stderr, "quantlens-cli: note: %s\n", oneLine(note).c_str());
        stage(o.llamaRules, rules.text);
    }
    if (!o.recipe.empty()) {
        const PlanText recipe = llmCompressorRecipe(m, r);
        for (const auto& note : recipe.notes)
            std::fprintf(stderr, "quantlens-cli: note: %s\n", oneLine(note).c_str());
        stage(o.recipe, recipe.text);
    }
    std::vector<std::string> written;
    if (!o.out.empty()) {
        exportPlan(request, m, r, o.out, events);
        progress.finish();
        written = {o.out, (std::filesystem::absolute(o.out).parent_path() / "config.json").string()};
    }
    try {
        for (auto& text : texts) {
            text->commit();
            written.push_back(text->target());
        }
    } catch (...) { // a rename that fails after the export: what this run wrote goes again
        for (const auto& path : written) {
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
        throw;
    }
    return 0;
}

} // namespace ql::cli
