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

/// Builds the spec; throws UsageError for malformed or conflicting flags and FileError when the
/// group-index file cannot be read.
QuantSpec buildSpec(const SpecOptions& o);

/// Scales / zero points from --scale / --zero-point, or nullopt when the spec calibrates.
std::optional<QuantParams> loadExplicitParams(const SpecOptions& o);

/// Reads FILE:TENSOR (the last ':' splits, so paths may hold ':') as floats.
std::vector<float> loadFileTensor(const std::string& fileColonTensor, const char* flag);

} // namespace ql::cli
