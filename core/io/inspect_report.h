#pragma once
// What `quantlens-cli inspect --json` prints and Python's `inspect()` returns: one document for both.
#include "io/tensor_source.h"

#include <nlohmann/json.hpp>
#include <string>

namespace ql {

/// {"file", "tensors": [{name, dtype, shape, bytes, location[, qdq]}], "not_listed": [{name, reason}]};
/// `file` is the path as the user gave it.
nlohmann::json inspectReport(const TensorSource& source, const std::string& file);

} // namespace ql
