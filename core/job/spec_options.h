#pragma once
// The spec options every front end takes, and the one table that names them: quantlens-cli's SPEC
// flags (--preset, --group-size, ...) and the Python module's keywords (preset=, group_size=, ...)
// are read from specFields(), so the two cannot drift apart. specFromOptions turns the options into
// a QuantSpec with the CLI's checks and messages.
#include "base/error.h"
#include "quant/params.h"
#include "quant/spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ql {

/// The options as typed: text exactly as given, empty when left out.
struct SpecOptions {
    std::string preset = "torch";
    std::string scheme; // empty: per-channel (per-group/block/ragged when their options say so)
    std::string axis;   // "0", "-1" or "0,1"; empty: 0 (groups, blocks and block formats: last)
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
    /// Values given in memory (the Python module's arrays) in place of the FILE:TENSOR above: each
    /// counts as that option given.
    std::optional<std::vector<std::int64_t>> groupEnds;
    std::optional<std::vector<float>> scaleValues;
    std::optional<std::vector<float>> zeroPointValues;
};

/// A malformed or conflicting option: the CLI's usage error (exit code 2), Python's ValueError.
class SpecError : public QuantError {
public:
    using QuantError::QuantError;
};

/// One option of the table: its CLI flag and Python keyword, its help, and the field it sets (exactly
/// one of the three member pointers).
struct SpecField {
    std::string flag;    // "--group-size"
    std::string keyword; // "group_size"
    std::string help;
    std::string SpecOptions::*text = nullptr;   // a value, as typed
    std::int64_t SpecOptions::*count = nullptr; // a positive integer
    bool SpecOptions::*on = nullptr;            // a switch
};
/// Every spec option, in the order the CLI's help lists them.
const std::vector<SpecField>& specFields();
/// The field for a Python keyword; nullptr when there is none.
const SpecField* specFieldOfKeyword(const std::string& keyword);

/// Builds the spec. Throws SpecError for malformed or conflicting options, FileError when the
/// group-index file cannot be read.
QuantSpec specFromOptions(const SpecOptions& o);

/// The given scales / zero points (in memory, or read from FILE:TENSOR), or nullopt when the spec
/// calibrates. Throws SpecError / FileError as specFromOptions does.
std::optional<QuantParams> explicitParamsOf(const SpecOptions& o);

/// Reads FILE:TENSOR (the last ':' splits, so paths may hold ':') as floats; `flag` names the option
/// in messages. Throws SpecError when the text is not FILE:TENSOR, FileError when it cannot be read.
std::vector<float> loadSpecTensor(const std::string& fileColonTensor, const char* flag);

} // namespace ql
