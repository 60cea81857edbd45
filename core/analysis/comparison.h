#pragma once
// Code-by-code comparison of two results for the same tensor (two backends, or two presets),
// with the convention difference that explains the mismatches, found by experiment: each
// differing convention detail of B is applied alone to A's arithmetic, and the one that turns
// A's code into B's code on the mismatched elements is named.
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace ql {

struct CodeMismatch {
    std::int64_t index = 0;
    float x = 0;
    std::int32_t codeA = 0;
    std::int32_t codeB = 0;
    float scaleA = 0;
    float scaleB = 0;
};

struct MismatchCause {
    std::string name;           // "scale-op", "zero-point-stage", "rounding", "overflow", "nan", "scales"
    std::string summary;        // "division vs multiplication by the reciprocal"
    std::string detail;         // what each side does, in words
    std::int64_t explained = 0; // mismatches this difference alone reproduces
};

struct Comparison {
    std::string labelA;
    std::string labelB;
    std::int64_t count = 0;
    std::int64_t mismatched = 0;
    /// codeB − codeA (floating codes by their signed magnitude order) -> count.
    std::map<std::int32_t, std::int64_t> codeDiff;
    std::int64_t firstMismatch = -1;
    std::int64_t worstMismatch = -1;    // largest |codeB − codeA|, lowest index on ties
    std::vector<CodeMismatch> examples; // the first few mismatches, then the worst
    std::int64_t scaleCount = 0;        // compared scale entries (0 when the layouts differ)
    std::int64_t scaleMismatches = 0;
    std::map<std::int64_t, std::int64_t> scaleUlpDiff; // ULP distance -> count (differing entries)
    std::int64_t maxScaleUlp = 0;
    std::int64_t zeroPointMismatches = 0;
    std::vector<MismatchCause> causes; // most explanatory first; only causes explaining something
    std::string verdict;               // one paragraph in plain words
};

/// Compares B against A. `x` are the original values (needed to explain mismatches).
/// Throws QuantError when the two results are not of the same tensor (shape or size differ).
Comparison compareResults(const std::string& labelA, const ResolvedSpec& planA, const QuantParams& paramsA,
                          const Codes& codesA, const std::string& labelB, const ResolvedSpec& planB,
                          const QuantParams& paramsB, const Codes& codesB, std::span<const float> x);

/// Distance in units in the last place between two floats (0 when equal, also +0 vs −0, and for
/// two NaNs of the same bits; the largest distance between a NaN and anything else).
std::int64_t ulpDistance(float a, float b);

/// Where two code arrays differ: counts over a grid of at most maxCells x maxCells cells of the
/// tensor viewed as [shape[0], rest], so a large tensor still fits one picture.
struct MismatchMap {
    int rows = 0;
    int cols = 0;
    std::vector<double> counts; // rows * cols, row-major; empty when the codes agree
};
MismatchMap mismatchMap(const Codes& a, const Codes& b, const Shape& shape, int maxCells = 64);
/// The tensor seen as a matrix for maps: [rows, product of the other dims].
std::pair<std::int64_t, std::int64_t> matrixView(const Shape& shape);

} // namespace ql
