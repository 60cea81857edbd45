#pragma once
// Reading a JSON report back into the structures the pages draw (the GUI opening a report written
// earlier, or merged from shards): the same statistics, histograms, per-group rows and timing.
#include "report/report.h"

#include <nlohmann/json.hpp>

namespace ql {

/// One entry of a report's "tensors" list. Statistics are rebuilt from the entry's accumulators,
/// so every metric reads exactly as when the report was written; histograms keep their edges and
/// counts; per-group rows are those the report lists (the first 4096). Throws FileError saying
/// which field is missing or malformed.
TensorReport reportFromJson(const nlohmann::json& entry);

} // namespace ql
