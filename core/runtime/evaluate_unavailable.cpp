#include "base/error.h"
#include "runtime/evaluate_job.h"
#include "runtime/model_rewrite.h"
#include "runtime/output_objective.h"

namespace ql {
namespace {

const char* const kNoOnnx = "this build of QuantLens has no ONNX support (libonnx-dev), which evaluate needs";

} // namespace

EvaluateOutcome runEvaluateJob(const JobRequest&, const EvaluateOptions&, const ProgressFn&) {
    throw FileError(kNoOnnx);
}

std::vector<std::vector<HostTensor>> evaluationSamples(const EvaluateOptions&, const std::vector<TensorDecl>&,
                                                       EvaluateOutcome&) {
    throw FileError(kNoOnnx);
}

OutputObjective::OutputObjective(const std::string& model, const EvaluateOptions&) {
    throw FileError(model + ": " + kNoOnnx);
}

OutputObjective::~OutputObjective() = default;

bool OutputObjective::replaces(const std::string&) const {
    return false;
}

double OutputObjective::squaredError(const std::string&, const std::vector<float>&) const {
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
