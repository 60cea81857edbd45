#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/job_request.h"
#include "io/atomic_file.h"
#include "job/diff_job.h"
#include "job/tensor_diff.h"
#include "report/check.h"
#include "report/model_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>

namespace ql::cli {
CLI::App* addDiff(CLI::App& parent, DiffOptions& o) {
    auto* cmd = parent.add_subcommand(
        "diff",
        "Compare two checkpoints of the same model tensor by tensor: A is the reference, B its quantized or "
        "converted version (or two versions). Names are matched exactly, then through the Hugging Face <-> "
        "GGUF naming. Prints each pair's SQNR, largest difference and ULPs; with --rule, exit code 1 when "
        "a rule fails (the rules of `check`, e.g. 'sqnr < 30' or 'max_ulp > 0'). When both store codes on "
        "one grid (GGUF Q8_0/Q4_0/Q4_1/Q5_0/Q5_1, ONNX QDQ, compressed-tensors), the codes are compared too; "
        "--requantize quantizes A with the SPEC flags and compares those codes with B's.");
    cmd->add_option("A", o.a, "The reference checkpoint")->required();
    cmd->add_option("B", o.b, "The checkpoint compared with it")->required();
    cmd->add_option("--tensor", o.tensors, "Only this tensor of A (repeatable)");
    cmd->add_option("--match", o.match, "Only A's tensors whose name matches this regular expression");
    cmd->add_option("--rule", o.rules, "A failure rule (repeatable), as for `check`");
    cmd->add_option("--report", o.report, "Write the diff as a JSON report (`check` reads it)");
    cmd->add_option(
           "--shard", o.shard,
           "Compare only shard I of N (from 0) of the pairs, byte-balanced as quantize --shard splits, and "
           "write it as a partial report (--report PART.json) that `merge` joins")
        ->group("FAN-OUT");
    cmd->add_flag("--quiet,-q", o.quiet, "Only the summary and the failures");
    cmd->add_flag(
           "--requantize", o.requantize,
           "Quantize each of A's tensors with the SPEC flags (--preset, --scheme, --calib file --scale "
           "FILE:TENSOR, ...) and compare its codes and scales with B's stored ones")
        ->group("REQUANTIZE");
    addSpecOptions(*cmd, o.spec);
    cmd->add_option("--backend", o.backend, "Backend the re-quantization runs on")
        ->capture_default_str()
        ->group("REQUANTIZE");
    return cmd;
}

int runDiff(const DiffOptions& o) {
    std::vector<CheckRule> rules;
    for (const auto& text : o.rules) {
        try {
            rules.push_back(CheckRule::parse(text));
        } catch (const QuantError& e) {
            throw UsageError("--rule: " + std::string(e.what()));
        }
    }
    if (!o.report.empty() && std::filesystem::path(o.report).extension() != ".json")
        throw UsageError("--report " + o.report + ": use a .json file name");
    DiffRequest request;
    if (!o.match.empty()) {
        try {
            request.selection.match = std::regex(o.match);
        } catch (const std::regex_error& e) {
            throw UsageError("--match: '" + o.match + "' is not a valid regular expression: " + e.what());
        }
    }
    request.fileA = o.a;
    request.pathB = o.b;
    request.selection.tensors = o.tensors;
    if (!o.shard.empty()) {
        try {
            request.selection.shard = parseShard(o.shard);
        } catch (const QuantError& e) {
            throw UsageError("--shard: " + std::string(e.what()));
        }
        if (o.report.empty())
            throw UsageError("--shard: give --report PART.json; the shard's part is what merge joins");
        request.selection.shardRun = {{"rules", o.rules}};
    }
    // With --requantize, A is opened by the job request the quantize command would make.
    if (o.requantize) request.requantize = makeRequest(o.a, o.spec, o.backend);
    request.a = request.requantize ? request.requantize->source
                                   : std::shared_ptr<const TensorSource>(openTensorSource(o.a));
    request.files.output(o.report, "--report");
    const DiffOutcome outcome = runDiffJob(std::move(request));
    const std::vector<TensorDiff>& diffs = outcome.diffs;
    const TensorMatch& match = outcome.match;
    const nlohmann::json report = outcome.report();
    if (!o.report.empty()) {
        const std::string text = report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        AtomicFile out(o.report, o.a);
        out.write(text.data(), text.size());
        out.commit();
    }

    if (!o.quiet) {
        std::printf("%-40s %-16s %9s %11s %9s %9s\n", "tensor", "shape", "SQNR dB", "max |A-B|", "max ULP",
                    "cosine");
        for (const TensorDiff& d : diffs) {
            const std::string name = printable(d.pair.a == d.pair.b ? d.pair.a : d.pair.a + " ~ " + d.pair.b);
            if (!d.failure.empty()) {
                std::printf("%s  FAILED: %s\n", name.c_str(), oneLine(d.failure).c_str());
                continue;
            }
            if (name.size() > 40) std::printf("%s\n", name.c_str());
            std::printf("%-40s %-16s %9s %11s %9lld %9s\n", name.size() > 40 ? "" : name.c_str(),
                        toString(d.shape).c_str(), tableNumber(d.stats.sqnrDb(), "%.2f").c_str(),
                        tableNumber(d.stats.maxAbsError(), "%.4g").c_str(), static_cast<long long>(d.maxUlp),
                        tableNumber(d.stats.cosine(), "%.6f").c_str());
            if (d.codes)
                std::printf(
                    "    codes: %lld of %lld differ (max |dcode| %lld), %lld of %lld scales differ  [%s vs "
                    "%s]\n",
                    static_cast<long long>(d.codes->mismatches), static_cast<long long>(d.codes->compared),
                    static_cast<long long>(d.codes->maxDelta),
                    static_cast<long long>(d.codes->scaleMismatches), static_cast<long long>(d.codes->scales),
                    d.codes->formatA.c_str(), d.codes->formatB.c_str());
            if (!d.note.empty()) std::printf("    note: %s\n", oneLine(d.note).c_str());
        }
    }
    int failedPairs = 0;
    for (const TensorDiff& d : diffs)
        failedPairs += !d.failure.empty();
    std::fprintf(stderr,
                 "quantlens-cli: diff: %zu pairs compared (%d could not be), %zu only in A, %zu only in B\n",
                 diffs.size(), failedPairs, match.onlyA.size(), match.onlyB.size());
    if (!match.onlyA.empty())
        std::fprintf(stderr, "quantlens-cli: only in %s: %s%s\n", o.a.c_str(),
                     printable(match.onlyA.front()).c_str(), match.onlyA.size() > 1 ? ", ..." : "");
    if (!match.onlyB.empty())
        std::fprintf(stderr, "quantlens-cli: only in %s: %s%s\n", o.b.c_str(),
                     printable(match.onlyB.front()).c_str(), match.onlyB.size() > 1 ? ", ..." : "");
    if (rules.empty()) return failedPairs ? 1 : 0;
    const CheckResult result = runChecks(report, rules);
    for (const auto& s : result.subjects)
        for (const auto& f : s.failures)
            std::printf("FAIL  %s: %s\n", printable(s.name).c_str(), oneLine(f).c_str());
    return result.failed() ? 1 : 0;
}

} // namespace ql::cli
