#pragma once
// Scales and zero points a user supplies from a file (calibration "file"), for one tensor or for
// every tensor of a model run by name (internal to core/job).
#include <optional>
#include <string>

#include "job/job.h"

namespace ql {

/// nullopt unless the request's calibration is Explicit. A reference FILE:TENSOR names one tensor's
/// parameters (refused when `selected` > 1); a file alone is looked up by name: `<tensor>_scale`
/// and `<tensor>_zero_point`. Throws FileError / QuantError naming the file, tensor and reason.
std::optional<QuantParams> explicitParams(const JobRequest& request, const std::string& tensor, std::size_t selected);

} // namespace ql
