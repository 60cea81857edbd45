#pragma once
// Two stored quantizations of one tensor compared code by code: how many codes differ and by how
// much, and how many scales, zero points and offsets differ. The grids must be the same (bits,
// signedness, scale layout); StoredQuantization::gridDifference says why when they are not.
#include "io/stored_quantization.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ql {

struct CodeDiff {
    std::string formatA; // "gguf Q8_0", "quantlens torch int8 per-channel", ...
    std::string formatB;
    std::int64_t compared = 0;       // codes compared (every element)
    std::int64_t mismatches = 0;     // codes that differ
    std::int64_t maxDelta = 0;       // max |code A - code B|
    std::int64_t firstMismatch = -1; // flat index of the first differing code; -1 when none
    std::int64_t scales = 0;         // scales compared (one per group)
    std::int64_t scaleMismatches = 0;
    std::int64_t zeroPointMismatches = 0;
    std::int64_t offsetMismatches = 0;
};

/// Throws QuantError with the grids' difference when they are not the same.
CodeDiff compareCodes(const StoredQuantization& a, const StoredQuantization& b);

/// {"format", "format_b", "compared", "code_mismatches", "max_code_diff", "first_mismatch", "scales",
/// "code_scale_mismatches", "code_zero_point_mismatches", "code_offset_mismatches"}.
nlohmann::json toJson(const CodeDiff& d);

} // namespace ql
