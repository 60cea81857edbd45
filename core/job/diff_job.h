#pragma once
// A whole diff, as both front ends run it: B opened, the tensors matched, the selected pairs (a
// shard's part of them) compared in A's order with progress and cancellation between pairs, and the
// report (a partial report for a shard). The app and `quantlens-cli diff` differ only in what they
// print.
#include "backend/backend.h"
#include "io/run_files.h"
#include "job/job.h"
#include "job/shard.h"
#include "job/tensor_diff.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace ql {

/// Which of the matched pairs a diff compares (all of them by default).
struct DiffSelection {
    std::vector<std::string> tensors; // only these of A's tensors; each must have a counterpart in B
    std::optional<std::regex> match;  // only A's tensors whose name (at most 4096 bytes) matches
    std::optional<ShardSpec> shard;   // only this shard's byte-balanced part (split by A's tensors)
    /// What every shard's part must share besides the diff itself (e.g. the CLI's rules): recorded
    /// in the partial report's header, so parts of different runs are never merged.
    nlohmann::json shardRun = nlohmann::json::object();
};

struct DiffRequest {
    std::shared_ptr<const TensorSource> a; // model A, opened (the requantize request's source when set)
    std::string fileA; // A as the user named it, for reports and messages; empty: its path
    std::string pathB;
    /// A request on A: A's tensors are quantized with its spec and their codes compared with B's
    /// stored ones, as `quantlens-cli diff --requantize` does.
    std::optional<JobRequest> requantize;
    DiffSelection selection;
    /// The caller's outputs (the report it will write); the job adds the inputs (the request's, A's
    /// and B's files) and checks them all before any pair runs.
    RunFiles files;
};

struct DiffOutcome {
    std::shared_ptr<const TensorSource> a;
    std::shared_ptr<const TensorSource> b;
    std::string fileA, fileB;      // as the request named them
    TensorMatch match;             // every matched pair, selected or not
    std::vector<TensorDiff> diffs; // one per selected pair (the shard's part), in A's order
    bool requantized = false;      // A's codes are its re-quantization with the request's spec
    /// A shard's run: its header (shardHeader) and each diff's position among the selected pairs.
    std::optional<nlohmann::json> shardHeader;
    std::vector<std::int64_t> positions;
    /// diffReport of the diffs; for a shard, its partial report (job/report_parts.h) that merge joins.
    nlohmann::json report() const;
};

/// Throws FileError when `pathB` is model A itself (or one of its files), however it is spelled:
/// a diff of a model against itself compares nothing. (With --requantize it does: a QDQ model's
/// dequantized weights re-quantized against its own stored codes, so callers skip it there.)
void refuseSelfDiff(const TensorSource& a, const std::string& pathB);

/// Runs the request. Throws FileError when B is A itself (unless re-quantizing), cannot be opened,
/// an output is refused (RunFiles), B shares no tensor with A or the selection leaves none, or a
/// named tensor has no counterpart; Cancelled when `progress` returns false. A pair that cannot be
/// compared is a TensorDiff with its failure.
DiffOutcome runDiffJob(DiffRequest request, const ProgressFn& progress = {});

/// The whole diff of `a` against `pathB`, as the app and the Python module run it.
DiffOutcome runDiffJob(std::shared_ptr<const TensorSource> a, const std::string& pathB,
                       const ProgressFn& progress = {}, std::optional<JobRequest> requantize = {});

} // namespace ql
