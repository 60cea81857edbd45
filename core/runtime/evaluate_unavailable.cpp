#include "base/error.h"
#include "runtime/evaluate_job.h"
#include "runtime/model_rewrite.h"

namespace ql {
namespace {

const char* const kNoOnnx = "this build of QuantLens has no ONNX support (libonnx-dev), which evaluate needs";

} // namespace

EvaluateOutcome runEvaluateJob(const JobRequest&, const EvaluateOptions&, const ProgressFn&) {
    throw FileError(kNoOnnx);
}

struct ModelRewriter::Impl {};

ModelRewriter::ModelRewriter(const std::string& path) {
    throw FileError(path + ": " + kNoOnnx);
}

ModelRewriter::~ModelRewriter() = default;

std::string ModelRewriter::rewrite(const std::map<std::string, const std::vector<float>*>&,
                                   const std::vector<std::string>&) const {
    throw FileError(kNoOnnx);
}

} // namespace ql
