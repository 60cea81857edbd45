#include "job/diff_job.h"

#include "base/error.h"
#include "io/run_files.h"

#include <filesystem>

namespace ql {

void refuseSelfDiff(const TensorSource& a, const std::string& pathB) {
    bool same = sameFile(a.path(), pathB);
    for (const std::string& f : a.files())
        same = same || sameFile(f, pathB);
    if (same)
        throw FileError(pathB + ": this is model A itself (" + a.path() +
                        "); choose its quantized or converted version");
}

DiffOutcome runDiffJob(std::shared_ptr<const TensorSource> a, const std::string& pathB,
                       const ProgressFn& progress, std::optional<JobRequest> requantize) {
    if (!requantize) refuseSelfDiff(*a, pathB);
    DiffOutcome out;
    out.b = openTensorSource(pathB);
    out.a = std::move(a);
    if (requantize) requantize->source = out.a;
    out.requantized = requantize.has_value();
    out.match = matchTensors(*out.a, *out.b);
    if (out.match.pairs.empty())
        throw FileError(out.a->path() + " and " + pathB +
                        ": no tensor in common (names matched exactly, "
                        "through the Hugging Face <-> GGUF naming and onnxruntime's QDQ naming)");
    const auto total = static_cast<double>(out.match.pairs.size());
    reportProgress(progress, 0.0);
    for (const TensorPair& pair : out.match.pairs) {
        out.diffs.push_back(diffTensors(*out.a, *out.b, pair, requantize ? &*requantize : nullptr));
        reportProgress(progress, static_cast<double>(out.diffs.size()) / total);
    }
    return out;
}

} // namespace ql
