#pragma once
// The SPEC flags shared by quantize / compare / sweep, and their translation to ql::QuantSpec.
#include "io/tensor_source.h"
#include "quant/params.h"
#include "quant/plan.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ql::cli {

struct SpecOptions {
    std::string preset = "torch";
    std::string scheme; // empty: per-channel (per-group/block/ragged when their flags say so)
    std::string axis;   // "0", "-1" or "0,1"; empty: 0 (block formats: last)
    std::int64_t groupSize = 0;
    std::string block;
    std::string groupIndex; // FILE:TENSOR
    std::string dtype;
    bool symmetric = false;
    bool asymmetric = false;
    bool narrowRange = false;
    std::string round;
    std::string calib;
    std::string scale;     // FILE:TENSOR
    std::string zeroPoint; // FILE:TENSOR
    bool sqrtMode = false;
};

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
