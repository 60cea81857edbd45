#pragma once
// The SPEC flags shared by quantize / compare / sweep, and their translation to ql::QuantSpec. The
// flags come from core's one table of spec options (job/spec_options.h), which the Python module reads
// too; here they become CLI11 options, and a malformed spec a usage error.
#include "io/tensor_source.h"
#include "job/spec_options.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ql::cli {

using ql::SpecOptions;

/// Adds the SPEC flags to a subcommand; `withGroupSize` false leaves --group-size to the caller (sweep).
void addSpecOptions(CLI::App& app, SpecOptions& o, bool withGroupSize = true);

/// --include-non-weights, the same words on quantize and plan: whole-model runs take weights only
/// (quant/weight_role.h notAWeight) and keep biases, norms and scalars unless it is given.
void addIncludeNonWeightsOption(CLI::App& app, bool& include);

/// Throws UsageError when --axis names an axis no selected tensor has (`--axis 5` on a model whose
/// largest tensor is 4-D): a mistyped flag, not one tensor's failure. An axis that fits some of them
/// applies to all, and fails, with the reason, those it does not fit.
void requireAxesInRange(const QuantSpec& spec, const TensorSource& source,
                        const std::vector<std::string>& names);

/// Builds the spec; throws UsageError for malformed or conflicting flags and FileError when the
/// group-index file cannot be read.
QuantSpec buildSpec(const SpecOptions& o);

/// Scales / zero points from --scale / --zero-point, or nullopt when the spec calibrates.
std::optional<QuantParams> loadExplicitParams(const SpecOptions& o);

/// Reads FILE:TENSOR (the last ':' splits, so paths may hold ':') as floats.
std::vector<float> loadFileTensor(const std::string& fileColonTensor, const char* flag);

} // namespace ql::cli
