#pragma once
// QuantSpec <-> JSON, for export metadata, reports and saved sessions.
#include "quant/resolved_spec.h"

#include <nlohmann/json.hpp>

namespace ql {

nlohmann::json toJson(const QuantSpec& spec);
/// Throws QuantError on unknown names or missing fields.
QuantSpec specFromJson(const nlohmann::json& j);
/// Spec plus what the plan resolved: convention details, scale shape, code type, packing.
nlohmann::json toJson(const ResolvedSpec& plan);

} // namespace ql
