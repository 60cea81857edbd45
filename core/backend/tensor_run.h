#pragma once
// One tensor through plan -> backend -> analysis: the step the CLI and the GUI both run.
#include <optional>
#include <span>

#include "analysis/report.h"
#include "backend/backend.h"
#include "io/tensor_source.h"

namespace ql {

struct TensorRun {
    TensorReport report; // plan, parameters, timing and analysis
    Result result;       // the backend's result, codes included
};

/// Plans `spec` for the tensor, runs it on `backend` and analyses the codes against `values`.
/// Throws QuantError (impossible spec, unsupported by the backend, parameters that do not fit) or
/// Cancelled; the caller adds file and tensor to the message.
TensorRun runTensor(const TensorInfo& info, std::span<const float> values, const QuantSpec& spec,
                    const Backend& backend, const std::optional<QuantParams>& params = std::nullopt,
                    int repeat = 1, const ProgressFn& progress = {});

} // namespace ql
