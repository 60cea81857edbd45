#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <regex>

#include "analysis/check.h"
#include "analysis/model_table.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "io/atomic_file.h"
#include "job/diff_job.h"
#include "tensor/error.h"

namespace ql::cli {
namespace {

std::string number(double v, const char* fmt) {
    if (std::isnan(v)) return "-";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

} // namespace

CLI::App* addDiff(CLI::App& parent, DiffOptions& o) {
    auto* cmd = parent.add_subcommand(
        "diff", "Compare two checkpoints of the same model tensor by tensor: A is the reference, B its quantized or "
                "converted version (or two versions). Names are matched exactly, then through the Hugging Face <-> "
                "GGUF naming. Prints each pair's SQNR, largest difference and ULPs; with --rule, exit code 1 when "
                "a rule fails (the rules of `check`, e.g. 'sqnr < 30' or 'max_ulp > 0').");
    cmd->add_option("A", o.a, "The reference checkpoint")->required();
    cmd->add_option("B", o.b, "The checkpoint compared with it")->required();
    cmd->add_option("--tensor", o.tensors, "Only this tensor of A (repeatable)");
    cmd->add_option("--match", o.match, "Only A's tensors whose name matches this regular expression");
    cmd->add_option("--rule", o.rules, "A failure rule (repeatable), as for `check`");
    cmd->add_option("--report", o.report, "Write the diff as a JSON report (`check` reads it)");
    cmd->add_flag("--quiet,-q", o.quiet, "Only the summary and the failures");
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
    std::regex re;
    if (!o.match.empty()) {
        try {
            re = std::regex(o.match);
        } catch (const std::regex_error& e) {
            throw UsageError("--match: '" + o.match + "' is not a valid regular expression: " + e.what());
        }
    }
    const auto a = openTensorSource(o.a);
    const auto b = openTensorSource(o.b);
    if (!o.report.empty()) {
        refuseOverwritingInputs(o.report, *a);
        refuseOverwritingInputs(o.report, *b);
    }
    TensorMatch match = matchTensors(*a, *b);
    std::vector<TensorPair> pairs;
    for (const auto& p : match.pairs) {
        const bool named = o.tensors.empty() || std::find(o.tensors.begin(), o.tensors.end(), p.a) != o.tensors.end();
        const bool matched = o.match.empty() || (p.a.size() <= 4096 && std::regex_search(p.a, re));
        if (named && matched) pairs.push_back(p);
    }
    for (const auto& name : o.tensors)
        if (std::none_of(pairs.begin(), pairs.end(), [&](const TensorPair& p) { return p.a == name; }))
            throw FileError(o.a + ": tensor '" + name + "' has no counterpart in " + o.b);
    if (pairs.empty()) throw FileError(o.a + " and " + o.b + ": no tensor in common");

    std::vector<TensorDiff> diffs;
    for (const auto& p : pairs) diffs.push_back(diffTensors(*a, *b, p));
    const nlohmann::json report = diffReport(o.a, o.b, diffs);
    if (!o.report.empty()) {
        const std::string text = report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        AtomicFile out(o.report, o.a);
        out.write(text.data(), text.size());
        out.commit();
    }

    if (!o.quiet) {
        std::printf("%-40s %-16s %9s %11s %9s %9s\n", "tensor", "shape", "SQNR dB", "max |A-B|", "max ULP", "cosine");
        for (const TensorDiff& d : diffs) {
            const std::string name = d.pair.a == d.pair.b ? d.pair.a : d.pair.a + " ~ " + d.pair.b;
            if (!d.failure.empty()) {
                std::printf("%s  FAILED: %s\n", name.c_str(), oneLine(d.failure).c_str());
                continue;
            }
            if (name.size() > 40) std::printf("%s\n", name.c_str());
            std::printf("%-40s %-16s %9s %11s %9lld %9s\n", name.size() > 40 ? "" : name.c_str(), toString(d.shape).c_str(),
                        number(d.stats.sqnrDb(), "%.2f").c_str(), number(d.stats.maxAbsError(), "%.4g").c_str(),
                        static_cast<long long>(d.maxUlp), number(d.stats.cosine(), "%.6f").c_str());
            if (!d.note.empty()) std::printf("    note: %s\n", d.note.c_str());
        }
    }
    int failedPairs = 0;
    for (const TensorDiff& d : diffs) failedPairs += !d.failure.empty();
    std::fprintf(stderr, "quantlens-cli: diff: %zu pairs compared (%d could not be), %zu only in A, %zu only in B\n",
                 diffs.size(), failedPairs, match.onlyA.size(), match.onlyB.size());
    if (!match.onlyA.empty())
        std::fprintf(stderr, "quantlens-cli: only in %s: %s%s\n", o.a.c_str(), match.onlyA.front().c_str(),
                     match.onlyA.size() > 1 ? ", ..." : "");
    if (!match.onlyB.empty())
        std::fprintf(stderr, "quantlens-cli: only in %s: %s%s\n", o.b.c_str(), match.onlyB.front().c_str(),
                     match.onlyB.size() > 1 ? ", ..." : "");
    if (rules.empty()) return failedPairs ? 1 : 0;
    const CheckResult result = runChecks(report, rules);
    for (const auto& s : result.subjects)
        for (const auto& f : s.failures) std::printf("FAIL  %s: %s\n", s.name.c_str(), oneLine(f).c_str());
    return result.failed() ? 1 : 0;
}

} // namespace ql::cli
