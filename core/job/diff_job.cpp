#include "job/diff_job.h"

#include "base/error.h"
#include "job/report_parts.h"

#include <algorithm>
#include <map>

namespace ql {

void refuseSelfDiff(const TensorSource& a, const std::string& pathB) {
    bool same = sameFile(a.path(), pathB);
    for (const std::string& f : a.files())
        same = same || sameFile(f, pathB);
    if (same)
        throw FileError(pathB + ": this is model A itself (" + a.path() +
                        "); choose its quantized or converted version");
}

namespace {

std::vector<TensorPair> selectedPairs(const DiffRequest& r, const TensorMatch& match) {
    const DiffSelection& s = r.selection;
    std::vector<TensorPair> pairs;
    for (const auto& p : match.pairs) {
        const bool named =
            s.tensors.empty() || std::find(s.tensors.begin(), s.tensors.end(), p.a) != s.tensors.end();
        const bool matched = !s.match || (p.a.size() <= 4096 && std::regex_search(p.a, *s.match));
        if (named && matched) pairs.push_back(p);
    }
    for (const auto& name : s.tensors)
        if (std::none_of(pairs.begin(), pairs.end(), [&](const TensorPair& p) { return p.a == name; }))
            throw FileError(r.fileA + ": tensor '" + name + "' has no counterpart in " + r.pathB);
    if (pairs.empty()) throw FileError(r.fileA + " and " + r.pathB + ": no tensor in common");
    return pairs;
}

} // namespace

nlohmann::json DiffOutcome::report() const {
    nlohmann::json whole = diffReport(fileA, fileB, diffs);
    if (!shardHeader) return whole;
    std::map<std::int64_t, nlohmann::json> entries;
    for (std::size_t i = 0; i < positions.size(); ++i)
        entries[positions[i]] = whole["tensors"][i];
    return partialReport(*shardHeader, entries, nullptr, {{"file_b", fileB}});
}

DiffOutcome runDiffJob(DiffRequest r, const ProgressFn& progress) {
    if (r.fileA.empty()) r.fileA = r.a->path();
    if (!r.requantize) refuseSelfDiff(*r.a, r.pathB);
    DiffOutcome out;
    out.b = openTensorSource(r.pathB);
    out.a = r.a;
    out.fileA = r.fileA;
    out.fileB = r.pathB;
    if (r.requantize) {
        r.requantize->source = out.a;
        addRequestInputs(r.files, *r.requantize);
    }
    r.files.input(*out.a, "model A");
    r.files.input(*out.b, "model B");
    r.files.check();
    out.requantized = r.requantize.has_value();
    out.match = matchTensors(*out.a, *out.b);
    if (out.match.pairs.empty())
        throw FileError(r.fileA + " and " + r.pathB +
                        ": no tensor in common (names matched exactly, "
                        "through the Hugging Face <-> GGUF naming and onnxruntime's QDQ naming)");
    std::vector<TensorPair> pairs = selectedPairs(r, out.match);
    if (r.selection.shard) {
        std::vector<std::string> names;
        names.reserve(pairs.size());
        for (const auto& p : pairs)
            names.push_back(p.a);
        const ShardPart part = shardPart(*out.a, names, *r.selection.shard);
        nlohmann::json run = r.selection.shardRun;
        run["diff"] = r.pathB;
        run["requantize"] = out.requantized;
        out.shardHeader = shardHeader(r.fileA, *r.selection.shard, names, run);
        std::vector<TensorPair> mine;
        mine.reserve(part.positions.size());
        for (std::int64_t position : part.positions)
            mine.push_back(pairs[static_cast<std::size_t>(position)]);
        pairs = std::move(mine);
        out.positions = part.positions;
    }
    const auto total = static_cast<double>(pairs.size());
    reportProgress(progress, 0.0);
    out.diffs.reserve(pairs.size());
    for (const TensorPair& pair : pairs) {
        out.diffs.push_back(diffTensors(*out.a, *out.b, pair, r.requantize ? &*r.requantize : nullptr));
        reportProgress(progress, static_cast<double>(out.diffs.size()) / total);
    }
    return out;
}

DiffOutcome runDiffJob(std::shared_ptr<const TensorSource> a, const std::string& pathB,
                       const ProgressFn& progress, std::optional<JobRequest> requantize) {
    DiffRequest r;
    r.a = std::move(a);
    r.pathB = pathB;
    r.requantize = std::move(requantize);
    return runDiffJob(std::move(r), progress);
}

} // namespace ql
