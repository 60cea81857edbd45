#pragma once
// Partial reports: what one shard of a model run writes, and their exact merge.
//
// A partial report is an ordinary JSON report ({"file", "tensors"}) plus a "shard" object:
//   {"index": I, "count": N, "selected": tensors in the whole run, "selection": digest of their
//    names, "run": {"spec", "backend"}, "positions": [each listed tensor's place in the run],
//    "export": {"file", "index"} when the shard wrote weights}.
// Each tensor's entry is the one a single process writes (its statistics depend on nothing but
// the tensor and the spec), so merging the parts in position order and dropping "shard" gives the
// single-process report byte for byte, timings aside.
#include "job/shard.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ql {

/// What every part of one run shares; two parts merge only when these are equal.
nlohmann::json shardHeader(const std::string& file, const ShardSpec& shard,
                           const std::vector<std::string>& selected, const nlohmann::json& run);

/// The shard's report: its tensors' entries (position → entry) in position order, with the header,
/// the positions, the export (null when none) and any other top-level keys the report has (`extra`,
/// e.g. a diff's "file_b"), which every part must share.
nlohmann::json partialReport(const nlohmann::json& header,
                             const std::map<std::int64_t, nlohmann::json>& entries,
                             const nlohmann::json& exported, const nlohmann::json& extra = nullptr);

/// Reads a report written by QuantLens (at most 4 GiB of text and 4 GiB once parsed, nesting and
/// size checked before parsing). Throws
/// FileError naming the file and the reason.
nlohmann::json readReportFile(const std::string& path);

struct MergedReport {
    nlohmann::json report;               // the single-process report: the parts' keys but "shard"
    std::vector<nlohmann::json> exports; // each part's "export", in shard order
};

/// Merges the parts of one run. Throws FileError naming the part and the reason when a part is not
/// a partial report, belongs to another run (file, spec, selection or N differ), repeats a shard
/// or a tensor, or when shards are missing (they are listed).
MergedReport mergeReports(const std::vector<std::string>& paths, const std::vector<nlohmann::json>& parts);

/// The weight index the shards' exports share: its path and the export files, in shard order.
struct ExportIndex {
    std::string path; // empty: no part exported weights
    std::vector<std::string> files;
};

/// The parts' exports, checked to be what `quantize --shard I/N --out OUT` names: shard I of N's
/// OUT-0000<I+1>-of-0000N.safetensors beside OUT.safetensors.index.json, one index for all. A part
/// naming any other file as its index (another model's, a report) is refused with the reason.
ExportIndex exportIndexOf(const std::vector<nlohmann::json>& exports, std::int64_t shardCount);

/// Writes the merged shards' weight index (model.safetensors.index.json, as Hugging Face
/// checkpoints have): every tensor of each shard's export mapped to that file's name. Throws
/// FileError when an export is missing, unreadable or names a tensor another shard also holds, or
/// when an index already there maps weights to other files than these (it is another model's).
void writeExportIndex(const ExportIndex& index);

} // namespace ql
