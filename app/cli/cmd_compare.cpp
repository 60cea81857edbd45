#include <cstdio>
#include <string>
#include <utility>

#include "analysis/model_table.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/tensor_runner.h"
#include "quant/calibration.h"
#include "cpu/builtin.h"
#include "tensor/error.h"

namespace ql::cli {
namespace {

void printComparison(const Comparison& c) {
    std::printf("A: %s\nB: %s\n", c.labelA.c_str(), c.labelB.c_str());
    std::printf("mismatched codes: %lld of %lld\n", static_cast<long long>(c.mismatched),
                static_cast<long long>(c.count));
    for (const auto& [d, n] : c.codeDiff) std::printf("  B - A = %+d: %lld\n", d, static_cast<long long>(n));
    if (c.firstMismatch >= 0)
        std::printf("first mismatch at %lld, worst at %lld\n", static_cast<long long>(c.firstMismatch),
                    static_cast<long long>(c.worstMismatch));
    for (const auto& e : c.examples)
        std::printf("  [%lld] x = %.9g: A %d, B %d (scale A %.9g, B %.9g)\n", static_cast<long long>(e.index), e.x,
                    e.codeA, e.codeB, e.scaleA, e.scaleB);
    if (c.scaleCount)
        std::printf("scales differing: %lld of %lld (max %lld ULP); zero points differing: %lld\n",
                    static_cast<long long>(c.scaleMismatches), static_cast<long long>(c.scaleCount),
                    static_cast<long long>(c.maxScaleUlp), static_cast<long long>(c.zeroPointMismatches));
    std::printf("verdict: %s\n", c.verdict.c_str());
}

// Each side's phases (median of --repeat runs): where a device spends its time next to the CPU.
void printTimings(const std::string& labelA, const Timing& a, const std::string& labelB, const Timing& b) {
    const std::string title = "timing (median of " + std::to_string(a.runs) + (a.runs == 1 ? " run" : " runs") + ", ms)";
    std::printf("%-32s %9s %9s %9s %9s %9s\n", title.c_str(), "prepare", "upload", "kernel", "download", "total");
    for (const auto& [label, t] : {std::pair{"A " + labelA, a.median}, std::pair{"B " + labelB, b.median}})
        std::printf("  %-30s %9.3f %9.3f %9.3f %9.3f %9.3f\n", label.c_str(), t.prepareMs, t.uploadMs, t.kernelMs,
                    t.downloadMs, t.totalMs);
}

} // namespace

CLI::App* addCompare(CLI::App& parent, CompareOptions& o) {
    auto* cmd = parent.add_subcommand("compare", "Quantize one tensor two ways (two backends or two presets) and "
                                                 "compare the codes, naming the convention that explains them.");
    cmd->add_option("FILE", o.file, "Model file (safetensors or HDF5)")->required();
    cmd->add_option("--tensor", o.tensor, "Tensor name")->required();
    addSpecOptions(*cmd, o.spec);
    cmd->add_option("--backend", o.backend, "Backend for A")->capture_default_str();
    auto* bb = cmd->add_option("--backend-b", o.backendB, "Run B on this backend (same spec)");
    auto* pb = cmd->add_option("--preset-b", o.presetB, "Run B with this preset (same backend and flags)");
    bb->excludes(pb);
    cmd->add_option("--report", o.report, "Write a report (.json or .csv)");
    cmd->add_option("--repeat", o.repeat, "Run each side N times; timings give the median")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_flag("--quiet,-q", o.quiet, "No progress bar");
    return cmd;
}

int runCompare(const CompareOptions& o) {
    if (o.backendB.empty() == o.presetB.empty()) throw UsageError("compare needs one of --backend-b NAME or --preset-b NAME");
    const QuantSpec specA = buildSpec(o.spec);
    QuantSpec specB = specA;
    if (!o.presetB.empty()) {
        const auto p = presetFromName(o.presetB);
        if (!p) throw UsageError("unknown --preset-b '" + o.presetB + "'");
        specB.preset = *p;
    }
    BackendRegistry registry;
    registerBuiltinBackends(registry);
    const Backend& backendA = pickBackend(registry, o.backend);
    const Backend& backendB = pickBackend(registry, o.backendB.empty() ? o.backend : o.backendB);
    const auto source = openTensorSource(o.file);
    const TensorInfo* info = source->find(o.tensor);
    if (!info) throw FileError(where(o.file, o.tensor, "no such tensor in the file"));
    const auto paramsA = loadExplicitParams(o.spec);
    const auto values = loadValues(*source, o.tensor);

    ProgressPrinter progress(o.quiet);
    auto runSide = [&](const QuantSpec& spec, const Backend& backend, std::optional<QuantParams> params, int index) {
        progress.begin(index, 2, info->name);
        try {
            return runTensor(*info, values, spec, backend, params, o.repeat, progress.callback());
        } catch (const QuantError& e) {
            throw QuantError(where(o.file, o.tensor, std::string(index ? "B" : "A") + " (" + describe(spec) + "): " + e.what()));
        }
    };
    TensorRun a = runSide(specA, backendA, paramsA, 0);
    std::optional<QuantParams> paramsB = paramsA;
    if (paramsA) paramsB = convertParams(*paramsA, a.result.plan.convention, conventionOf(specB));
    TensorRun b = runSide(specB, backendB, paramsB, 1);
    progress.finish();

    const std::string labelA = o.presetB.empty() ? backendA.name() : std::string(nameOf(specA.preset));
    const std::string labelB = o.presetB.empty() ? backendB.name() : std::string(nameOf(specB.preset));
    const Comparison c = compareResults(labelA, a.result.plan, a.result.params, a.result.codes, labelB, b.result.plan,
                                        b.result.params, b.result.codes, values);
    std::vector<TensorReport> reports{a.report, b.report};
    auto rows = modelRows(reports);
    rows[0].name = "A " + labelA;
    rows[1].name = "B " + labelB;
    std::fputs(formatModelTable(rows).c_str(), stdout);
    printTimings(labelA, a.result.timing, labelB, b.result.timing);
    printComparison(c);
    if (!o.report.empty()) writeReport(o.report, o.file, reports, &c);
    return 0;
}

} // namespace ql::cli
