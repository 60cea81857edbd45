#include "analysis/statistics_agreement.h"
#include "base/error.h"
#include "base/suggest.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/job_request.h"
#include "cli/progress.h"
#include "io/model_formats.h"
#include "report/model_table.h"

#include <cstdio>
#include <string>
#include <utility>

namespace ql::cli {
namespace {

void printComparison(const Comparison& c) {
    std::printf("A: %s\nB: %s\n", c.labelA.c_str(), c.labelB.c_str());
    std::printf("mismatched codes: %lld of %lld\n", static_cast<long long>(c.mismatched),
                static_cast<long long>(c.count));
    for (const auto& [d, n] : c.codeDiff)
        std::printf("  B - A = %+d: %lld\n", d, static_cast<long long>(n));
    if (c.firstMismatch >= 0)
        std::printf("first mismatch at %lld, worst at %lld\n", static_cast<long long>(c.firstMismatch),
                    static_cast<long long>(c.worstMismatch));
    for (const auto& e : c.examples)
        std::printf("  [%lld] x = %.9g: A %d, B %d (scale A %.9g, B %.9g)\n", static_cast<long long>(e.index),
                    e.x, e.codeA, e.codeB, e.scaleA, e.scaleB);
    if (c.scaleCount)
        std::printf("scales differing: %lld of %lld (max %lld ULP); zero points differing: %lld\n",
                    static_cast<long long>(c.scaleMismatches), static_cast<long long>(c.scaleCount),
                    static_cast<long long>(c.maxScaleUlp), static_cast<long long>(c.zeroPointMismatches));
    std::printf("verdict: %s\n", c.verdict.c_str());
}

// Two backends running one spec must agree on every statistic, not only on the codes.
void printStatisticsAgreement(const TensorAnalysis& b, const TensorAnalysis& a) {
    const std::vector<std::string> differences = statisticsDifferences(b, a);
    if (differences.empty()) {
        std::printf("statistics: equal (counts and histograms exactly, sums within %g relative)\n",
                    kStatisticsSumTolerance);
        return;
    }
    std::printf("statistics differ:\n");
    for (const std::string& d : differences)
        std::printf("  %s\n", d.c_str());
}

// Each side's phases (median of --repeat runs): where a device spends its time next to the CPU.
void printTimings(const std::string& labelA, const Timing& a, const std::string& labelB, const Timing& b) {
    const std::string title =
        "timing (median of " + std::to_string(a.runs) + (a.runs == 1 ? " run" : " runs") + ", ms)";
    std::printf("%-32s %9s %9s %9s %9s %9s\n", title.c_str(), "prepare", "upload", "kernel", "download",
                "total");
    for (const auto& [label, t] : {std::pair{"A " + labelA, a.median}, std::pair{"B " + labelB, b.median}})
        std::printf("  %-30s %9.3f %9.3f %9.3f %9.3f %9.3f\n", label.c_str(), t.prepareMs, t.uploadMs,
                    t.kernelMs, t.downloadMs, t.totalMs);
}

} // namespace

CLI::App* addCompare(CLI::App& parent, CompareOptions& o) {
    auto* cmd =
        parent.add_subcommand("compare", "Quantize one tensor two ways (two backends or two presets) and "
                                         "compare the codes, naming the convention that explains them.");
    cmd->add_option("FILE", o.file, "Model file (" + modelFormatNames() + ")")->required();
    cmd->add_option("--tensor", o.tensor, "Tensor name")->required();
    addSpecOptions(*cmd, o.spec);
    addImportanceOption(*cmd, o.importance);
    cmd->add_option("--backend", o.backend, "Backend for A")->capture_default_str();
    auto* bb = cmd->add_option("--backend-b", o.backendB, "Run B on this backend (same spec)");
    auto* pb = cmd->add_option("--preset-b", o.presetB, "Run B with this preset (same backend and flags)");
    bb->excludes(pb);
    cmd->add_option("--report", o.report, "Write a report (.json or .csv)");
    cmd->add_option("--repeat", o.repeat, "Run each side N times; timings give the median")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_flag("--fail-on-mismatch", o.failOnMismatch,
                  "Exit 1 when any code (or scale) differs: compare as a check in a script or CI");
    cmd->add_flag("--quiet,-q", o.quiet, "No progress bar");
    return cmd;
}

int runCompare(const CompareOptions& o) {
    if (o.backendB.empty() == o.presetB.empty())
        throw UsageError("compare needs one of --backend-b NAME or --preset-b NAME");
    JobRequest request = makeRequest(o.file, o.spec, o.backend, o.repeat, o.importance);
    refuseOutputsOverInputs(request, {{o.report, "--report"}});
    if (!o.presetB.empty()) {
        const auto p = presetFromName(o.presetB);
        if (!p)
            throw UsageError("unknown --preset-b '" + o.presetB + "'" + didYouMean(o.presetB, presetNames()));
        request.compare = {CompareWith::Kind::Preset, {}, *p};
    } else {
        pickBackend(*request.registry, o.backendB);
        request.compare = {CompareWith::Kind::Backend, o.backendB, {}};
    }

    ProgressPrinter progress(o.quiet);
    requireAxesInRange(request.spec, *request.source, {o.tensor});
    progress.begin(0, 1, o.tensor);
    const TensorOutcome out = runTensorJob(request, o.tensor, progress.callback());
    progress.finish();

    const Comparison& c = *out.comparison;
    std::vector<TensorReport> reports{out.a.report, out.b->report};
    noteMissingImportance(o.file, {out.a.report});
    auto rows = modelRows(reports);
    rows[0].name = "A " + out.a.label;
    rows[1].name = "B " + out.b->label;
    std::fputs(formatModelTable(rows).c_str(), stdout);
    printTimings(out.a.label, out.a.report.timing, out.b->label, out.b->report.timing);
    printComparison(c);
    if (!o.backendB.empty()) printStatisticsAgreement(out.b->report.analysis, out.a.report.analysis);
    if (!o.report.empty()) writeReport(o.report, o.file, reports, &c);
    return o.failOnMismatch && (c.mismatched > 0 || c.scaleMismatches > 0 || c.zeroPointMismatches > 0) ? 1
                                                                                                        : 0;
}

} // namespace ql::cli
