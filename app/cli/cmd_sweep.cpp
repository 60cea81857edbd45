#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "cli/job_request.h"
#include "cli/progress.h"
#include "io/model_formats.h"
#include "report/model_table.h"

#include <algorithm>
#include <cstdio>

namespace ql::cli {
namespace {

// A sweep keeps every size's whole result (per-group rows included) to rank them: a bounded few.
constexpr std::size_t kMaxSizes = 64;

// The sizes of --group-size, each once, in the order given.
std::vector<std::int64_t> parseSizes(const std::string& text) {
    std::vector<std::int64_t> sizes;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = std::min(text.find(',', pos), text.size());
        const std::string item = text.substr(pos, comma - pos);
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || v <= 0)
            throw UsageError("--group-size expects positive sizes separated by commas, got '" + text + "'");
        if (std::find(sizes.begin(), sizes.end(), v) == sizes.end()) sizes.push_back(v); // each once
        if (sizes.size() > kMaxSizes)
            throw UsageError("--group-size: at most " + std::to_string(kMaxSizes) +
                             " sizes in one sweep (each keeps its whole result)");
        pos = comma + 1;
    }
    return sizes;
}

} // namespace

CLI::App* addSweep(CLI::App& parent, SweepOptions& o) {
    auto* cmd =
        parent.add_subcommand("sweep", "Quantize one tensor with groups (blocks) of several sizes along "
                                       "--axis (default last) and tabulate the error of each.");
    cmd->add_option("FILE", o.file, "Model file (" + modelFormatNames() + ")")->required();
    cmd->add_option("--tensor", o.tensor, "Tensor name")->required();
    cmd->add_option("--group-size", o.groupSizes, "Group sizes to try, e.g. 32,64,128")->required();
    addSpecOptions(*cmd, o.spec, false);
    addImportanceOption(*cmd, o.importance);
    cmd->add_option("--backend", o.backend, "Backend to run on (`quantlens-cli backends` lists this build's)")
        ->capture_default_str();
    cmd->add_option("--report", o.report, "Write a report (.json or .csv), one entry per group size");
    cmd->add_flag("--quiet,-q", o.quiet, "No progress bar");
    return cmd;
}

int runSweep(const SweepOptions& o) {
    const auto sizes = parseSizes(o.groupSizes);
    if (!o.spec.scale.empty()) throw UsageError("sweep calibrates each group size; --scale does not apply");
    if (!o.spec.block.empty() || !o.spec.groupIndex.empty())
        throw UsageError(std::string(o.spec.block.empty() ? "--group-index" : "--block") +
                         " fixes the groups; sweep sets them from each --group-size in turn: leave it out");
    JobRequest request = makeRequest(o.file, o.spec, o.backend, 1, o.importance);
    refuseOutputsOverInputs(request, {{o.report, "--report"}});
    QuantSpec& spec = request.spec;
    if (!o.spec.scheme.empty() && spec.scheme != Scheme::PerGroup && spec.scheme != Scheme::Block)
        throw UsageError(
            "sweep varies the group size: use --scheme block or per-group (or leave --scheme out)");
    // Contiguous groups of G along one axis: the operators express it as 1-D block quantization
    // (TensorRT); per-group is the same layout for the custom preset.
    if (spec.scheme != Scheme::PerGroup) spec.scheme = Scheme::Block;
    if (o.spec.axis.empty()) spec.axes.clear(); // groups along the last axis, GPTQ style
    requireAxesInRange(spec, *request.source, {o.tensor});

    ProgressPrinter progress(o.quiet);
    const SweepOutcome out = runSweepJob(
        request, o.tensor, sizes,
        [&](int index, int total) {
            progress.begin(index, total,
                           "group size " + std::to_string(sizes[static_cast<std::size_t>(index)]));
        },
        progress.callback());
    progress.finish();
    for (const auto& [size, reason] : out.skipped)
        std::fprintf(
            stderr, "quantlens-cli: note: %s\n",
            oneLine(where(o.file, o.tensor, "group size " + std::to_string(size) + " skipped: " + reason))
                .c_str());
    noteMissingImportance(o.file, out.reports);
    auto rows = modelRows(out.reports);
    for (std::size_t i = 0; i < rows.size(); ++i)
        rows[i].name = "group " + std::to_string(out.sizes[i]);
    std::fputs(formatModelTable(rows).c_str(), stdout);
    if (!o.report.empty()) writeReport(o.report, o.file, out.reports);
    return 0;
}

} // namespace ql::cli
