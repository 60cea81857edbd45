#include "cli/shard_run.h"

#include "base/error.h"
#include "cli/cli_error.h"
#include "cli/job_request.h"
#include "io/atomic_file.h"
#include "quant/spec_json.h"
#include "report/model_table.h"
#include "report/report_format.h"

#include <cstdio>
#include <filesystem>
#include <map>

namespace ql::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ShardSpec shardOption(const std::string& text) {
    try {
        return parseShard(text);
    } catch (const QuantError& e) {
        throw UsageError("--shard: " + std::string(e.what()));
    }
}

} // namespace

std::pair<std::string, std::string> shardExportNames(const std::string& out, const ShardSpec& shard) {
    const fs::path path(out);
    const std::string stem = path.stem().string();
    char part[64];
    std::snprintf(part, sizeof part, "-%05d-of-%05d.safetensors", shard.index + 1, shard.count);
    return {(path.parent_path() / (stem + part)).string(),
            (path.parent_path() / (stem + ".safetensors.index.json")).string()};
}

ShardRun::ShardRun(const QuantizeOptions& o, const JobRequest& request,
                   const std::vector<std::string>& selected)
    : m_options(o)
    , m_shard(shardOption(o.shard)) {
    if (o.report.empty() || fs::path(o.report).extension() != ".json")
        throw UsageError(
            "--shard: give --report PART.json; the shard's part of the report is what merge joins");
    if (!o.out.empty() && fs::path(o.out).extension() != ".safetensors")
        throw UsageError("--shard: --out must be a .safetensors name; shards are written as "
                         "model-0000I-of-0000N.safetensors");
    if (!o.out.empty()) std::tie(m_exportPath, m_indexPath) = shardExportNames(o.out, m_shard);
    // The index is what merge writes later: in a folder that holds a model it would replace or shadow
    // that model's own index, so shards never export into the input model's folder.
    RunFiles weights;
    weights.protectFolder(modelFolderOf(o.file), "the input model's own folder, where the shards' weight "
                                                 "index would change what the model loads");
    weights.weightsOutput(m_exportPath, "--out (this shard's export)");
    weights.weightsOutput(m_indexPath, "the weight index merge writes");
    refuseOutputsOverInputs(request, {{o.report, "--report"}, {o.report + ".journal", "the shard's journal"}},
                            weights);
    if (!o.out.empty()) { // every task of an array may get here first: the folder is made by whichever does
        std::error_code ec;
        const fs::path folder = fs::absolute(m_exportPath).parent_path();
        fs::create_directories(folder, ec);
        if (!fs::is_directory(folder))
            throw FileError(o.out + ": cannot make the folder " + folder.string() + ": " + ec.message());
    }

    m_part = shardPart(*request.source, selected, m_shard);
    const json run = {
        {"spec", toJson(request.spec)}, {"backend", request.backend}, {"named", !o.tensors.empty()}};
    m_header = shardHeader(o.file, m_shard, selected, run);
    m_journal = std::make_unique<ReportJournal>(o.report + ".journal", m_header, o.resume);
    // A journal kept for --resume holds this shard's tensors only, each at its own position: any
    // other entry (a damaged or edited file) would land in the part report as if it had run.
    std::map<std::int64_t, std::string> ours;
    for (std::size_t i = 0; i < m_part.names.size(); ++i)
        ours[m_part.positions[i]] = m_part.names[i];
    for (const auto& [position, entry] : m_journal->entries()) {
        const auto it = ours.find(position);
        if (it == ours.end() || !entry.contains("name") || entry["name"] != it->second)
            throw FileError(
                o.report + ".journal: its entry at position " + std::to_string(position) +
                " is not one of this shard's tensors; remove the journal or run without --resume");
    }
    // An export needs every tensor's codes, and the journal keeps only reports: with --out the
    // finished tensors are run again.
    const bool reuse = o.out.empty();
    std::size_t reused = 0;
    for (std::size_t i = 0; i < m_part.names.size(); ++i) {
        if (reuse && m_journal->entries().count(m_part.positions[i])) {
            ++reused;
            continue;
        }
        m_remaining.push_back(m_part.names[i]);
        m_remainingPositions.push_back(m_part.positions[i]);
    }
    if (o.resume)
        std::fprintf(stderr, "quantlens-cli: shard %s: %zu of %zu tensors already done, %zu to run\n",
                     toString(m_shard).c_str(), reused, m_part.names.size(), m_remaining.size());
}

void ShardRun::finished(int index, const TensorReport& report) {
    m_journal->append(m_remainingPositions.at(static_cast<std::size_t>(index)), toJson(report));
}

int ShardRun::finish(bool exported) {
    const json exportJson = exported ? json{{"file", m_exportPath}, {"index", m_indexPath}} : json();
    const json report =
        partialReport(m_header, m_journal->entries(), exportJson, {{"format_version", kReportFormatVersion}});
    const std::string text = report.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
    AtomicFile out(m_options.report, m_options.file);
    out.write(text.data(), text.size());
    out.commit();
    m_journal->remove();

    auto rows = modelRows(report["tensors"], m_options.report);
    sortWorstFirst(rows);
    std::fputs(formatModelTable(rows).c_str(), stdout);
    for (const auto& r : rows)
        if (!r.error.empty()) return 1;
    return 0;
}

} // namespace ql::cli
