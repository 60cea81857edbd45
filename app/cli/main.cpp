// quantlens-cli: the QuantLens engine without a display.
// Exit codes: 0 success, 1 a job failed (one line naming file, tensor, reason), 2 bad usage.
#include "backend/backend.h"
#include "base/error.h"
#include "base/suggest.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "io/atomic_file.h"
#include "quantlens/config.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>

namespace {

int fail(int code, const std::string& message) {
    std::fprintf(stderr, "quantlens-cli: error: %s\n", ql::cli::oneLine(message).c_str());
    return code;
}

// No option or argument takes an empty value: `--out "$OUT"` with the variable unset would otherwise
// run the whole job and silently skip the export.
void refuseEmptyValues(CLI::App& app) {
    const CLI::Validator nonEmpty(
        [](std::string& v) {
            return v.empty() ? std::string("empty; give a value or leave it out") : std::string();
        },
        "");
    for (CLI::App* sub : app.get_subcommands({}))
        for (CLI::Option* option : sub->get_options({}))
            if (option->get_type_size() != 0) option->check(nonEmpty);
}

} // namespace

int main(int argc, char** argv) {
    using namespace ql::cli;
    ql::removeTemporariesOnSignals(); // Ctrl-C during an export leaves no temporary behind
    CLI::App app{"QuantLens: see what quantization does to model weights, without a display.\n"
                 "Exit codes: 0 success, 1 a tensor or file failed, 2 bad usage.",
                 "quantlens-cli"};
    app.set_version_flag("--version", QUANTLENS_VERSION);
    app.require_subcommand(1);
    InspectOptions inspect;
    QuantizeOptions quantize;
    CompareOptions compare;
    SweepOptions sweep;
    MergeOptions merge;
    CheckOptions check;
    DiffOptions diff;
    PlanOptions plan;
    CLI::App* inspectCmd = addInspect(app, inspect);
    CLI::App* quantizeCmd = addQuantize(app, quantize);
    CLI::App* compareCmd = addCompare(app, compare);
    CLI::App* sweepCmd = addSweep(app, sweep);
    CLI::App* mergeCmd = addMerge(app, merge);
    CLI::App* checkCmd = addCheck(app, check);
    CLI::App* diffCmd = addDiff(app, diff);
    CLI::App* planCmd = addPlan(app, plan);
    ql::EvaluateOptions evaluate;
    EvaluateCliOptions evaluateCli;
    CLI::App* evaluateCmd = addEvaluate(app, evaluate, evaluateCli);
    CLI::App* backendsCmd = addBackends(app);
    refuseEmptyValues(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e); // --help on any command, --version: CLI11 prints the right page
    } catch (const CLI::ParseError& e) {
        // A mistyped command ("quantise") gets the closest one named.
        std::string hint;
        if (argc > 1 && argv[1][0] != '-') {
            std::vector<std::string> commands;
            for (const CLI::App* sub : app.get_subcommands({}))
                commands.push_back(sub->get_name());
            if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end())
                hint = ql::didYouMean(argv[1], commands);
        }
        return fail(2, std::string(e.what()) + hint + " (see quantlens-cli --help)");
    }

    try {
        if (inspectCmd->parsed()) return runInspect(inspect);
        if (quantizeCmd->parsed()) return runQuantize(quantize);
        if (compareCmd->parsed()) return runCompare(compare);
        if (sweepCmd->parsed()) return runSweep(sweep);
        if (mergeCmd->parsed()) return runMerge(merge);
        if (checkCmd->parsed()) return runCheck(check);
        if (diffCmd->parsed()) return runDiff(diff);
        if (planCmd->parsed()) return runPlan(plan);
        if (evaluateCmd->parsed()) return runEvaluate(evaluate, evaluateCli);
        if (backendsCmd->parsed()) return runBackends();
    } catch (const UsageError& e) {
        return fail(2, e.what());
    } catch (const ql::Cancelled&) {
        return fail(1, "cancelled");
    } catch (const std::bad_alloc&) {
        return fail(
            1, "out of memory: the selected tensors (or their codes for --out) do not fit; select fewer");
    } catch (const std::exception& e) {
        return fail(1, e.what());
    }
    return fail(2, "no command given (see quantlens-cli --help)");
}
