#pragma once
// What quantize, compare and sweep share around ql::runTensor.
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "backend/backend.h"
#include "backend/tensor_run.h"
#include "backend/registry.h"
#include "io/tensor_source.h"

namespace ql::cli {

/// The tensor's values as f32, one copy.
std::vector<float> loadValues(const TensorSource& source, const std::string& name);

/// The named backend, or a UsageError listing the choices.
const Backend& pickBackend(const BackendRegistry& registry, const std::string& name);

/// Replaces newlines so an error stays on one line.
std::string oneLine(std::string s);

} // namespace ql::cli
