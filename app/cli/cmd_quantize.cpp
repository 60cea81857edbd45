#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/job_request.h"
#include "cli/progress.h"
#include "cli/shard_run.h"
#include "io/export_compressed_tensors.h"
#include "io/model_formats.h"
#include "io/printable.h"
#include "job/export_outcome.h"
#include "report/model_summary.h"
#include "report/model_table.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

namespace ql::cli {
namespace {

std::string extensionOf(const std::string& path) {
    return std::filesystem::path(path).extension().string();
}

// Every output is checked before any work starts: a run of an hour must not end in a bad name.
void checkOutputs(const QuantizeOptions& o) {
    const std::string out = extensionOf(o.out);
    if (!o.out.empty() && out != ".safetensors" && out != ".h5" && out != ".hdf5" && out != ".onnx")
        throw UsageError("--out " + o.out + ": use a .safetensors, .h5, .hdf5 or .onnx file name");
    if (out == ".onnx" && (!o.shard.empty() || extensionOf(o.file) != ".onnx"))
        throw UsageError("--out " + o.out + ": a QDQ ONNX export is written from an .onnx model, whole");
    const std::string report = extensionOf(o.report);
    if (!o.report.empty() && report != ".json" && report != ".csv")
        throw UsageError("--report " + o.report + ": use a .json or .csv file name");
    for (const std::string& path : {o.out, o.report}) {
        if (path.empty() || (path == o.out && !o.shard.empty()))
            continue; // a shard makes its export's folder
        const auto folder = std::filesystem::absolute(path).parent_path();
        std::error_code ec;
        if (!std::filesystem::is_directory(folder, ec))
            throw UsageError(path + ": the folder " + folder.string() + " does not exist");
        if (std::filesystem::is_directory(path, ec)) throw UsageError(path + ": is a folder");
    }
    if (out == ".safetensors" && o.exportLayout != "native" && o.shard.empty())
        (void)checkConfigTarget(o.out, o.file); // its config.json: never in the model's folder
}

// Where --out writes (a shard: its part, named by ShardRun).
ExportTarget exportTarget(const QuantizeOptions& o, const std::string& out) {
    return {out, o.exportLayout == "native" ? ExportLayout::Native : ExportLayout::CompressedTensors, o.file,
            !o.shard.empty()};
}

// One line per distinct reason, so an impossible spec on a whole model reads as one error.
void printFailures(const std::string& file, const std::vector<TensorReport>& reports) {
    std::map<std::string, std::vector<std::string>> byReason;
    for (const auto& r : reports)
        if (!r.error.empty()) byReason[r.error].push_back(r.name);
    for (const auto& [reason, names] : byReason) {
        std::string what = names.size() == 1 ? where(file, names[0], reason)
                                             : file + ": " + std::to_string(names.size()) + " tensors ('" +
                                                   names[0] + "', '" + names[1] + "'" +
                                                   (names.size() > 2 ? ", ..." : "") + "): " + reason;
        std::fprintf(stderr, "quantlens-cli: error: %s\n", oneLine(what).c_str());
    }
}

} // namespace

CLI::App* addQuantize(CLI::App& parent, QuantizeOptions& o) {
    auto* cmd = parent.add_subcommand("quantize",
                                      "Quantize tensors, print their error table worst first, and "
                                      "optionally export the codes and write a report. Tensors the spec "
                                      "does not apply to (integer buffers, scalars, shapes a group or "
                                      "block does not fit) are kept as they are and listed; a tensor that "
                                      "fails is listed with its reason and the exit code is 1.");
    cmd->add_option("FILE", o.file, "Model file (" + modelFormatNames() + ")")->required();
    cmd->add_option("--tensor", o.tensors, "Tensor name (repeatable)")->group("TENSORS");
    cmd->add_option("--match", o.match, "Every tensor whose name matches this regular expression")
        ->group("TENSORS");
    cmd->add_flag("--all", o.all, "Every tensor in the file")->group("TENSORS");
    addIncludeNonWeightsOption(*cmd, o.includeNonWeights);
    addSpecOptions(*cmd, o.spec);
    addImportanceOption(*cmd, o.importance);
    cmd->add_option("--backend", o.backend, "Backend to run on (`quantlens-cli backends` lists this build's)")
        ->capture_default_str();
    cmd->add_option(
        "--out", o.out,
        "Write the codes, scales and zero points of the tensors that succeeded (.safetensors, .h5; or "
        ".onnx: the ONNX model, its weights as integer codes behind DequantizeLinear)");
    std::vector<std::string> layouts; // the table the app's export dialog offers too
    std::string layoutHelp;
    for (const ExportLayoutInfo& l : exportLayouts()) {
        layouts.emplace_back(l.name);
        layoutHelp += (layoutHelp.empty() ? "" : "; or ") + std::string(l.name) + " (" +
                      std::string(l.description) + ")";
    }
    cmd->add_option("--export-layout", o.exportLayout, layoutHelp + ". Safetensors only")
        ->check(CLI::IsMember(layouts))
        ->capture_default_str();
    cmd->add_option("--report", o.report, "Write a report (.json or .csv)");
    cmd->add_option("--repeat", o.repeat, "Run each tensor N times; timing gives the median")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_flag(
        "--strict", o.strict,
        "All or nothing: any failed or passed-through tensor fails the run and nothing is exported");
    cmd->add_option(
           "--shard", o.shard,
           "Run only shard I of N (numbered from 0): a byte-balanced part of the selected tensors, the "
           "same on every machine. Needs --report PART.json; `merge` joins the parts. --out writes "
           "OUT-0000<I+1>-of-0000N.safetensors")
        ->group("FAN-OUT");
    cmd->add_flag("--resume", o.resume,
                  "With --shard: keep the tensors a killed run of this shard already finished (read from "
                  "PART.json.journal) and run the rest")
        ->group("FAN-OUT");
    cmd->add_flag("--quiet,-q", o.quiet, "No progress bar");
    return cmd;
}

int runQuantize(const QuantizeOptions& o) {
    checkOutputs(o);
    if (!o.tensors.empty() + !o.match.empty() + o.all != 1)
        throw UsageError("choose the tensors with exactly one of --tensor NAME..., --match REGEX or --all");
    const JobRequest request = makeRequest(o.file, o.spec, o.backend, o.repeat, o.importance);
    if (o.shard.empty()) { // a shard's outputs are checked with the names it derives (ShardRun)
        const bool config = extensionOf(o.out) == ".safetensors" && o.exportLayout != "native";
        const std::string configPath =
            config ? (std::filesystem::absolute(o.out).parent_path() / "config.json").string()
                   : std::string();
        refuseOutputsOverInputs(
            request, {{o.out, "--out"}, {o.report, "--report"}, {configPath, "the export's config.json"}});
    }
    std::vector<std::string> names;
    try {
        names = selectTensors(*request.source, {o.tensors, o.match, o.all});
    } catch (const FileError&) {
        throw;
    } catch (const QuantError& e) { // an invalid --match expression
        throw UsageError("--match: " + std::string(e.what()));
    }
    requireAxesInRange(request.spec, *request.source, names);

    if (o.resume && o.shard.empty())
        throw UsageError("--resume goes with --shard I/N (one process: --shard 0/1)");
    std::optional<ShardRun> shard;
    if (!o.shard.empty()) {
        if (o.strict) throw UsageError("--strict does not go with --shard: each shard would decide alone");
        shard.emplace(o, request, names);
        names = shard->remaining();
    }

    ProgressPrinter progress(o.quiet);
    ModelEvents events;
    int current = 0;
    events.started = [&](int index, int total, const std::string& tensor) {
        current = index;
        progress.begin(index, total, tensor);
    };
    events.progress = progress.callback();
    if (shard) events.finished = [&](const TensorReport& r) { shard->finished(current, r); };
    // Tensors the user named are quantized or fail; a whole-model run passes the rest through, and
    // with them, for a compressed-tensors export, the tensors that format cannot store.
    ModelJobOptions options{false, o.tensors.empty()};
    if (!o.out.empty()) options = exportJobOptions(exportTarget(o, o.out), o.tensors.empty());
    options.weightsOnly = o.tensors.empty() && !o.includeNonWeights; // named tensors: as asked
    const ModelOutcome outcome = runModelJob(request, names, options, events);
    progress.finish();
    printFailures(o.file, outcome.reports);
    noteMissingImportance(o.file, outcome.reports);
    // What the file holds that QuantLens does not read (a GGUF tensor of an undecoded type, an HDF5
    // dataset of an unreadable one) is said: a whole-model run, and its export, go without it.
    const std::vector<UnlistedEntry> unread =
        o.all ? request.source->unlisted() : std::vector<UnlistedEntry>{};
    printNotes(o.file, notReadNotes(unread, o.out));
    printNotes(o.file, calibrationNotes(outcome.reports)); // a calibration far worse than absmax is said
    if (shard) {
        // A shard with nothing to write (every tensor failed, or none fell to it) writes no file.
        const bool exported = !o.out.empty() && (!outcome.quantized.empty() || !outcome.kept.empty());
        if (exported) exportOutcome(outcome, exportTarget(o, shard->exportPath()));
        return shard->finish(exported);
    }
    auto rows = modelRows(outcome.reports);
    sortWorstFirst(rows);
    std::fputs(formatModelTable(rows).c_str(), stdout);
    if (o.all)
        std::printf(
            "\n%s\n",
            summaryText(summarizeModel(outcome.reports, request.source.get())).c_str()); // as the app's
    if (!o.report.empty()) writeReport(o.report, o.file, outcome.reports);
    const int quantized = static_cast<int>(outcome.reports.size()) - outcome.failed - outcome.passedThrough;
    if (o.strict && (outcome.failed || outcome.passedThrough || !unread.empty())) {
        if (outcome.passedThrough)
            std::fprintf(stderr,
                         "quantlens-cli: error: %s: --strict: %d tensor(s) would be kept unquantized\n",
                         o.file.c_str(), outcome.passedThrough);
        if (!unread.empty())
            std::fprintf(stderr,
                         "quantlens-cli: error: %s: --strict: %zu tensor(s) in the file are not read\n",
                         o.file.c_str(), unread.size());
        if (!o.out.empty())
            std::fprintf(stderr, "quantlens-cli: error: %s: not written (--strict)\n", o.out.c_str());
        return 1;
    }
    if (quantized == 0 &&
        outcome.failed == 0) { // the spec applies to none: a mistake in the spec, not a model
        std::string why = "no tensor was quantized";
        for (const auto& r : outcome.reports)
            if (!r.passedThrough.empty()) {
                why += " (the spec applies to none of the " + std::to_string(outcome.reports.size()) +
                       " selected; the first, '" + r.name + "': " + r.passedThrough + ")";
                break;
            }
        throw FileError(o.file + ": " + why + (o.out.empty() ? "" : "; " + o.out + " not written"));
    }
    if (!o.out.empty()) exportOutcome(outcome, exportTarget(o, o.out));
    return outcome.failed ? 1 : 0;
}

} // namespace ql::cli
