#pragma once
// One tensor through plan -> backend -> analysis: the step quantize, compare and sweep share.
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "backend/backend.h"
#include "backend/registry.h"
#include "io/tensor_source.h"

namespace ql::cli {

struct TensorRun {
    TensorReport report;
    Result result;
};

/// The tensor's values as f32, one copy.
std::vector<float> loadValues(const TensorSource& source, const std::string& name);

/// Plans, runs and analyses. Throws QuantError (impossible spec, unsupported by the backend,
/// parameters that do not fit) or Cancelled; the caller adds file and tensor to the message.
TensorRun quantizeTensor(const TensorInfo& info, const std::vector<float>& values, const QuantSpec& spec,
                         const Backend& backend, const std::optional<QuantParams>& params, int repeat,
                         const ProgressFn& progress);

/// The named backend, or a UsageError listing the choices.
const Backend& pickBackend(const BackendRegistry& registry, const std::string& name);

/// Explicit scales given for one convention, re-expressed for another (same step): a torch scale
/// file compared under ascend-quant means the inverse there.
QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to);

/// Replaces newlines so an error stays on one line.
std::string oneLine(std::string s);

} // namespace ql::cli
