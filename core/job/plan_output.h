#pragma once
// What a plan becomes: its JSON file (read back to re-plan for another budget without measuring),
// llama.cpp --tensor-type rules, an llm-compressor recipe, and a compressed-tensors checkpoint.
#include "job/plan_job.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ql {

nlohmann::json planJson(const PlanMeasurements& m, const PlanResult& r);
/// Throws FileError naming `path` and what is malformed.
PlanMeasurements planMeasurementsFromJson(const nlohmann::json& j, const std::string& path);

struct PlanText {
    std::string text;
    std::vector<std::string> notes; // what the reader of the text should know (approximations)
};
/// llama-quantize's --tensor-type-file: one "pattern=type" per line, the pattern matching the tensor's
/// llama.cpp name and no other however llama-quantize reads it (llamaRulePattern). The type is each
/// candidate's nearest ggml type; notes list where it is not the same arithmetic, and each tensor
/// left without a rule (a name no GGUF holds, a type llama-quantize does not know) with the reason.
PlanText llamaTensorTypeRules(const PlanMeasurements& m, const PlanResult& r);
/// An llm-compressor recipe: a QuantizationModifier whose config_groups target each chosen format's
/// modules by name (compressorTarget), with the modules kept as they are in `ignore`; ASCII YAML.
/// Notes name each module left out (a name that is not UTF-8).
PlanText llmCompressorRecipe(const PlanMeasurements& m, const PlanResult& r);

/// What the reader of a plan should know, as quantlens-cli plan notes it and the app shows it, each
/// naming `file`: a planned weight the importance file weighs nothing for (with why), and a candidate
/// no weight could take (with the first weight's reason).
std::vector<std::string> planNotes(const PlanMeasurements& m, const std::string& file);

/// Throws FileError naming the file and tensor when a planned weight is missing from `source` or has
/// another shape than the plan's, and QuantError when its chosen format does not fit it: what the
/// export would find only after quantizing the weights before it. Reads no tensor data.
void checkPlanFits(const TensorSource& source, const PlanMeasurements& m, const PlanResult& r);

/// Quantizes each planned weight with its chosen format and writes a compressed-tensors checkpoint
/// at `path` (mixed-precision when the formats differ) and its config.json; every other tensor of
/// the model is kept as it is. Throws FileError / QuantError naming the tensor (checkPlanFits first);
/// nothing is written then. Returns the number of quantized tensors.
int exportPlan(const JobRequest& request, const PlanMeasurements& m, const PlanResult& r,
               const std::string& path, const ModelEvents& events = {});

} // namespace ql
