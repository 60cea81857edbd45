#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/commands.h"
#include "io/atomic_file.h"
#include "io/run_files.h"
#include "job/report_parts.h"
#include "report/model_table.h"

#include <cstdio>
#include <filesystem>

namespace ql::cli {

CLI::App* addMerge(CLI::App& parent, MergeOptions& o) {
    auto* cmd = parent.add_subcommand(
        "merge",
        "Join the partial reports of a run split with `quantize --shard I/N` into the report one process "
        "would have written (byte for byte, timings aside), print its table worst first, and write the "
        "weight index of the shards' exports. Refuses parts of different runs and says which shards are "
        "missing. Exit code 1 when a tensor of the run failed.");
    cmd->add_option("PARTS", o.parts, "The shards' reports (PART.json), in any order")->required();
    cmd->add_option("-o,--out", o.out, "The merged report (.json)")->required();
    cmd->add_flag("--quiet,-q", o.quiet, "No table");
    return cmd;
}

int runMerge(const MergeOptions& o) {
    namespace fs = std::filesystem;
    if (fs::path(o.out).extension() != ".json")
        throw UsageError("--out " + o.out + ": use a .json file name");
    RunFiles files; // --out over a part is refused before anything is read
    for (const auto& path : o.parts)
        files.input(path, "a part");
    files.output(o.out, "--out");
    files.check();
    std::vector<nlohmann::json> parts;
    for (const auto& path : o.parts)
        parts.push_back(readReportFile(path));
    // Everything read and checked before anything is written, each fault named in its own part.
    std::vector<ModelRow> rows;
    MergedReport merged;
    try {
        merged = mergeReports(o.parts, parts);
        for (std::size_t p = 0; p < parts.size(); ++p)
            (void)modelRows(parts[p].value("tensors", nlohmann::json::array()), o.parts[p]);
        rows = modelRows(merged.report["tensors"], o.out);
    } catch (const nlohmann::json::exception& e) {
        throw FileError("merge: a part is not a well-formed QuantLens report: " + std::string(e.what()));
    }
    // Nothing is written over a part, the model the run read, a shard's export, or into the model's
    // folder (the index would change what the model loads).
    const ExportIndex index = exportIndexOf(merged.exports, parts[0]["shard"]["count"].get<std::int64_t>());
    const std::string model = merged.report["file"].get<std::string>();
    files.input(model, "the model the run read");
    for (const auto& file : index.files)
        files.input(file, "a shard's export");
    if (!index.path.empty())
        files.protectFolder(modelFolderOf(model), "the folder of the model the run read");
    files.weightsOutput(index.path, "the merged weight index");
    files.check();
    writeExportIndex(index);
    const std::string text =
        merged.report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    AtomicFile out(o.out);
    out.write(text.data(), text.size());
    out.commit();

    sortWorstFirst(rows);
    if (!o.quiet) std::fputs(formatModelTable(rows).c_str(), stdout);
    int failed = 0;
    for (const auto& r : rows)
        failed += !r.error.empty();
    std::fprintf(stderr, "quantlens-cli: merged %zu parts, %zu tensors (%d failed) into %s\n", parts.size(),
                 rows.size(), failed, o.out.c_str());
    return failed ? 1 : 0;
}

} // namespace ql::cli
