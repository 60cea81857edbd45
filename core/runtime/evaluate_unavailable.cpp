#include "base/error.h"
#include "runtime/evaluate_job.h"

namespace ql {

EvaluateOutcome runEvaluateJob(const JobRequest&, const EvaluateOptions&, const ProgressFn&) {
    throw FileError("this build of QuantLens has no ONNX support (libonnx-dev), which evaluate needs");
}

} // namespace ql
