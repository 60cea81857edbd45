#pragma once
// A whole diff as the desktop app runs it: B opened, the tensors matched, every pair compared in A's
// order with progress and cancellation between pairs. The CLI's `diff` compares the same pairs with
// the same diffTensors; this adds only the loop a long-running front end needs.
#include "backend/backend.h"
#include "job/job.h"
#include "job/tensor_diff.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ql {

struct DiffOutcome {
    std::shared_ptr<const TensorSource> a;
    std::shared_ptr<const TensorSource> b;
    TensorMatch match;
    std::vector<TensorDiff> diffs; // one per matched pair, in A's order
    bool requantized = false;      // A's codes are its re-quantization with the request's spec
    nlohmann::json report() const { return diffReport(a->path(), b->path(), diffs); }
};

/// Opens `pathB` (refused when it is A's own file: nothing to compare), matches and compares every
/// pair. Throws FileError when B cannot be opened or shares no tensor with A; Cancelled when
/// `progress` returns false. A pair that cannot be compared is a TensorDiff with its failure. With
/// `requantize` (a request on A), A's tensors are quantized with its spec and their codes compared
/// with B's stored ones, as `quantlens-cli diff --requantize` does.
/// Throws FileError when `pathB` is model A itself (or one of its files), however it is spelled:
/// a diff of a model against itself compares nothing. (With --requantize it does: a QDQ model's
/// dequantized weights re-quantized against its own stored codes, so callers skip it there.)
void refuseSelfDiff(const TensorSource& a, const std::string& pathB);

DiffOutcome runDiffJob(std::shared_ptr<const TensorSource> a, const std::string& pathB,
                       const ProgressFn& progress = {}, std::optional<JobRequest> requantize = {});

} // namespace ql
