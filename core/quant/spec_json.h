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
/// The plan toJson(plan) wrote, resolved again: its spec against its "shape", and through that view
/// when it records the tensor's own "tensor_shape". Throws QuantError.
ResolvedSpec planFromJson(const nlohmann::json& j);

} // namespace ql
