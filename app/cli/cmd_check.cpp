#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "io/atomic_file.h"
#include "io/run_files.h"
#include "job/report_parts.h"
#include "report/check.h"

#include <cstdio>
#include <filesystem>

namespace ql::cli {
namespace {

void writeText(const std::string& path, const std::string& text, const std::string& report) {
    AtomicFile out(path, report);
    out.write(text.data(), text.size());
    out.commit();
}

} // namespace

CLI::App* addCheck(CLI::App& parent, CheckOptions& o) {
    auto* cmd = parent.add_subcommand(
        "check",
        "Gate a CI run on a report (quantize, compare or merge --report FILE.json): rules say when a tensor "
        "or the model fails, e.g. 'sqnr < 30', 'cosine < 0.99 and max_abs > 0.001', 'mismatched_codes > 0', "
        "'min(sqnr) < 35'. Lists the failures; exit code 1 when any rule fails (or a tensor did not "
        "quantize), 0 when all pass.");
    cmd->add_option("REPORT", o.report, "The report (.json)")->required();
    cmd->add_option("--rule", o.rules, "A failure rule (repeatable)");
    cmd->add_option("--rules", o.rulesFile, "A file of rules, one per line ('#' starts a comment)");
    cmd->add_option("--junit", o.junit, "Also write the result as JUnit XML");
    cmd->add_option("--html", o.html,
                    "Also write a self-contained HTML page: the table and each failing tensor's plot");
    cmd->add_flag("--quiet,-q", o.quiet, "Only the failures");
    return cmd;
}

int runCheck(const CheckOptions& o) {
    // Outputs by their kind's extension, before anything is read: a slip of the flag must not
    // replace a model, a report or anything else that happens to be there.
    const std::string junit = std::filesystem::path(o.junit).extension().string(),
                      html = std::filesystem::path(o.html).extension().string();
    if (!o.junit.empty() && junit != ".xml")
        throw UsageError("--junit " + o.junit + ": JUnit results are written to a .xml file");
    if (!o.html.empty() && html != ".html" && html != ".htm")
        throw UsageError("--html " + o.html + ": the page is written to a .html file");
    std::vector<CheckRule> rules;
    if (!o.rulesFile.empty()) rules = readRules(o.rulesFile);
    for (const auto& text : o.rules) {
        try {
            rules.push_back(CheckRule::parse(text));
        } catch (const QuantError& e) {
            throw UsageError("--rule: " + std::string(e.what()));
        }
    }
    if (rules.empty()) throw UsageError("give the rules with --rule RULE or --rules FILE");
    RunFiles files;
    files.input(o.report, "the report being checked");
    files.input(o.rulesFile, "the rules file");
    files.output(o.junit, "--junit");
    files.output(o.html, "--html");
    files.check();
    const nlohmann::json report = readReportFile(o.report);
    CheckResult result;
    try {
        result = runChecks(checkReportOf(report), rules);
    } catch (const FileError& e) {
        throw FileError(o.report + ": " + e.what());
    } catch (const nlohmann::json::exception& e) { // a field of the wrong kind
        throw FileError(o.report + ": not a well-formed QuantLens report: " + e.what());
    }
    if (!o.junit.empty()) writeText(o.junit, junitXml(result, rules), o.report);
    if (!o.html.empty()) writeText(o.html, checkHtml(report, result, rules), o.report);

    int checked = 0;
    for (const auto& s : result.subjects) {
        if (s.status == "kept") continue;
        ++checked;
        // One line per subject and failure whatever the name holds: a newline in it would forge another.
        const std::string name = printable(s.name);
        if (s.status == "pass" && !o.quiet) std::printf("pass  %s\n", name.c_str());
        for (const auto& f : s.failures)
            std::printf("FAIL  %s: %s\n", name.c_str(), oneLine(f).c_str());
    }
    std::fprintf(stderr, "quantlens-cli: check: %d of %d failed (%zu rule%s)\n", result.failed(), checked,
                 rules.size(), rules.size() == 1 ? "" : "s");
    return result.failed() ? 1 : 0;
}

} // namespace ql::cli
