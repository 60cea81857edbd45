#include <cstdio>
#include <filesystem>
#include <map>
#include <unistd.h>
#include <regex>

#include "analysis/model_table.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/tensor_runner.h"
#include "cpu/builtin.h"
#include "io/export.h"
#include "tensor/error.h"

namespace ql::cli {
namespace {

std::vector<std::string> selectTensors(const QuantizeOptions& o, const TensorSource& source) {
    const int ways = !o.tensors.empty() + !o.match.empty() + o.all;
    if (ways != 1) throw UsageError("choose the tensors with exactly one of --tensor NAME..., --match REGEX or --all");
    std::vector<std::string> names;
    if (!o.tensors.empty()) {
        for (const auto& n : o.tensors)
            if (!source.find(n)) throw FileError(where(o.file, n, "no such tensor in the file"));
        return o.tensors;
    }
    std::regex re;
    try {
        re = std::regex(o.match.empty() ? ".*" : o.match);
    } catch (const std::regex_error& e) {
        throw UsageError("--match '" + o.match + "' is not a valid regular expression: " + e.what());
    }
    // Whole-model runs take the floating tensors of rank 1 or more: integer buffers (position ids,
    // masks) and scalar constants are not weights.
    int skipped = 0;
    for (const auto& t : source.tensors()) {
        if (!std::regex_search(t.name, re)) continue;
        if (isWeightTensor(t))
            names.push_back(t.name);
        else
            ++skipped;
    }
    if (names.empty())
        throw FileError(o.file + ": no floating-point tensor of rank 1 or more matches" +
                        (o.all ? "" : " '" + o.match + "'"));
    if (skipped && !o.quiet && isatty(fileno(stderr))) // a note for people, not for scripts
        std::fprintf(stderr, "quantlens-cli: skipped %d integer or scalar tensor(s)\n", skipped);
    return names;
}

void checkOutputPath(const std::string& path) {
    if (path.empty()) return;
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext != ".safetensors" && ext != ".h5" && ext != ".hdf5")
        throw UsageError("--out " + path + ": use a .safetensors, .h5 or .hdf5 file name");
}

void exportResults(const QuantizeOptions& o, const std::vector<QuantizedTensor>& out) {
    const std::string ext = std::filesystem::path(o.out).extension().string();
    if (ext == ".safetensors") {
        const ExportLayout layout = o.exportLayout == "native" ? ExportLayout::Native : ExportLayout::CompressedTensors;
        exportSafetensors(o.out, out, layout, o.file);
    } else {
        exportHdf5(o.out, out, o.file);
    }
}

// One line per distinct reason, so an impossible spec on a whole model reads as one error.
void reportFailures(const std::string& file, const std::map<std::string, std::vector<std::string>>& failures) {
    for (const auto& [reason, names] : failures) {
        std::string what = names.size() == 1 ? where(file, names[0], reason)
                                              : file + ": " + std::to_string(names.size()) + " tensors ('" +
                                                    names[0] + "', '" + names[1] + "'" +
                                                    (names.size() > 2 ? ", ..." : "") + "): " + reason;
        std::fprintf(stderr, "quantlens-cli: error: %s\n", oneLine(what).c_str());
    }
}

} // namespace

CLI::App* addQuantize(CLI::App& parent, QuantizeOptions& o) {
    auto* cmd = parent.add_subcommand("quantize", "Quantize tensors, print their error table worst first, and "
                                                  "optionally export the codes and write a report.");
    cmd->add_option("FILE", o.file, "Model file (safetensors or HDF5)")->required();
    cmd->add_option("--tensor", o.tensors, "Tensor name (repeatable)")->group("TENSORS");
    cmd->add_option("--match", o.match, "Every floating tensor whose name matches this regular expression")
        ->group("TENSORS");
    cmd->add_flag("--all", o.all, "Every floating tensor in the file")->group("TENSORS");
    addSpecOptions(*cmd, o.spec);
    cmd->add_option("--backend", o.backend, "Backend to run on (`quantlens-cli backends` lists this build's)")->capture_default_str();
    cmd->add_option("--out", o.out, "Write the codes, scales and zero points (.safetensors, .h5)");
    cmd->add_option("--export-layout", o.exportLayout, "compressed-tensors or native (safetensors only)")
        ->check(CLI::IsMember({"compressed-tensors", "native"}))
        ->capture_default_str();
    cmd->add_option("--report", o.report, "Write a report (.json or .csv)");
    cmd->add_option("--repeat", o.repeat, "Run each tensor N times; timing gives the median")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_flag("--quiet,-q", o.quiet, "No progress bar");
    return cmd;
}

int runQuantize(const QuantizeOptions& o) {
    checkOutputPath(o.out);
    if (!o.report.empty()) {
        const std::string ext = std::filesystem::path(o.report).extension().string();
        if (ext != ".json" && ext != ".csv") throw UsageError("--report " + o.report + ": use a .json or .csv file name");
    }
    const QuantSpec spec = buildSpec(o.spec);
    BackendRegistry registry;
    registerBuiltinBackends(registry);
    const Backend& backend = pickBackend(registry, o.backend);
    const auto source = openTensorSource(o.file);
    const auto names = selectTensors(o, *source);
    const auto params = loadExplicitParams(o.spec);

    std::vector<TensorReport> reports;
    std::vector<QuantizedTensor> exported;
    int failures = 0;
    std::map<std::string, std::vector<std::string>> failureReasons;
    ProgressPrinter progress(o.quiet);
    for (std::size_t i = 0; i < names.size(); ++i) {
        const TensorInfo& info = *source->find(names[i]);
        progress.begin(static_cast<int>(i), static_cast<int>(names.size()), info.name);
        try {
            const auto values = loadValues(*source, info.name);
            TensorRun run = runTensor(info, values, spec, backend, params, o.repeat, progress.callback());
            if (!o.out.empty())
                exported.push_back({info.name, run.result.plan, run.result.params, std::move(run.result.codes)});
            reports.push_back(std::move(run.report));
        } catch (const QuantError& e) {
            // One tensor's impossible spec does not stop a whole-model run; it is listed and fails the exit code.
            ++failures;
            failureReasons[e.what()].push_back(info.name);
            reports.push_back({info.name, info.shape, info.dtype, {}, backend.name(), {}, {}, {}, e.what()});
        }
    }
    progress.finish();
    reportFailures(o.file, failureReasons);
    if (failures == static_cast<int>(names.size()) && o.report.empty()) return 1; // nothing to tabulate

    auto rows = modelRows(reports);
    sortWorstFirst(rows);
    std::fputs(formatModelTable(rows).c_str(), stdout);
    if (!o.report.empty()) writeReport(o.report, o.file, reports);
    if (!o.out.empty()) {
        if (failures)
            throw FileError(o.out + ": not written because " + std::to_string(failures) + " tensor(s) failed");
        exportResults(o, exported);
    }
    return failures ? 1 : 0;
}

} // namespace ql::cli
