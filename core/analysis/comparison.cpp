#include "analysis/comparison.h"

#include "analysis/mismatch_causes.h"
#include "base/error.h"
#include "quant/layout.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace ql {
namespace {

constexpr std::size_t kFirstExamples = 8;

// Floating codes ordered by value (sign-magnitude -> signed), so a difference counts grid steps.
std::int32_t ordinal(std::int32_t code, Target t) {
    if (!isFloatTarget(t)) return code;
    const std::int32_t sign = t == Target::Fp4E2M1 ? 0x8 : 0x80;
    return (code & sign) ? -(code & (sign - 1)) : code;
}

void compareScales(const QuantParams& a, const QuantParams& b, Comparison& c) {
    if (a.scales.size() != b.scales.size()) return;
    c.scaleCount = static_cast<std::int64_t>(a.scales.size());
    for (std::size_t g = 0; g < a.scales.size(); ++g) {
        const std::int64_t ulp = ulpDistance(a.scales[g], b.scales[g]);
        if (ulp == 0) continue;
        ++c.scaleMismatches;
        ++c.scaleUlpDiff[ulp];
        c.maxScaleUlp = std::max(c.maxScaleUlp, ulp);
    }
    for (std::size_t g = 0; g < a.scales.size(); ++g) {
        const auto gi = static_cast<std::int64_t>(g);
        if (a.zeroPointOf(gi) != b.zeroPointOf(gi)) ++c.zeroPointMismatches;
    }
}

} // namespace

std::int64_t ulpDistance(float a, float b) {
    if (a == b || floatBits(a) == floatBits(b)) return 0; // the same NaN is the same scale
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<std::int64_t>::max();
    // Map the bit patterns onto a line where adjacent floats are adjacent integers.
    auto line = [](float f) {
        const auto bits = static_cast<std::int64_t>(floatBits(f));
        return bits & 0x80000000 ? -(bits & 0x7FFFFFFF) : bits;
    };
    return std::llabs(line(a) - line(b));
}

Comparison compareResults(const std::string& labelA, const ResolvedSpec& planA, const QuantParams& paramsA,
                          const Codes& codesA, const std::string& labelB, const ResolvedSpec& planB,
                          const QuantParams& paramsB, const Codes& codesB, std::span<const float> x) {
    // One side may index a view of the tensor (quant/weight_view.h): the same values in the same order.
    if (planA.ownShape() != planB.ownShape() || codesA.size() != codesB.size() ||
        static_cast<std::int64_t>(x.size()) != codesA.size())
        throw QuantError("comparison: the two results are not of the same tensor (" +
                         toString(planA.ownShape()) + " vs " + toString(planB.ownShape()) + ")");
    Comparison c;
    c.labelA = labelA;
    c.labelB = labelB;
    c.count = codesA.size();
    const ScaleIndexer ia(planA.layout, planA.shape);
    const ScaleIndexer ib(planB.layout, planB.shape);
    std::int32_t worstDiff = 0;
    std::vector<std::int64_t> mismatches;
    for (std::int64_t i = 0; i < c.count; ++i) {
        const std::int32_t a = codesA.at(i), b = codesB.at(i);
        if (a == b) continue;
        ++c.mismatched;
        mismatches.push_back(i);
        const std::int32_t d = ordinal(b, planB.codeTarget) - ordinal(a, planA.codeTarget);
        ++c.codeDiff[d];
        if (c.firstMismatch < 0) c.firstMismatch = i;
        if (std::abs(d) > worstDiff) {
            worstDiff = std::abs(d);
            c.worstMismatch = i;
        }
    }
    auto example = [&](std::int64_t i) {
        return CodeMismatch{i,
                            x[static_cast<std::size_t>(i)],
                            codesA.at(i),
                            codesB.at(i),
                            paramsA.scales[static_cast<std::size_t>(ia.scaleIndexOf(i))],
                            paramsB.scales[static_cast<std::size_t>(ib.scaleIndexOf(i))]};
    };
    for (std::size_t k = 0; k < mismatches.size() && k < kFirstExamples; ++k)
        c.examples.push_back(example(mismatches[k]));
    if (c.worstMismatch >= 0 && (c.examples.empty() || c.examples.back().index < c.worstMismatch) &&
        mismatches.size() > kFirstExamples)
        c.examples.push_back(example(c.worstMismatch));
    compareScales(paramsA, paramsB, c);
    c.causes =
        explainMismatches(labelA, labelB, planA, paramsA, ia, planB, paramsB, ib, codesB, x, mismatches);
    c.verdict = verdictOf(c);
    return c;
}

MismatchMap mismatchMap(const Codes& a, const Codes& b, const Shape& shape, int maxCells) {
    MismatchMap map;
    const std::int64_t rows = shape.empty() ? 1 : shape[0];
    const std::int64_t cols = rows ? elementCount(shape) / rows : 0;
    if (a.size() != b.size() || a.size() != rows * cols || cols == 0) return map;
    map.rows = static_cast<int>(std::min<std::int64_t>(rows, maxCells));
    map.cols = static_cast<int>(std::min<std::int64_t>(cols, maxCells));
    bool any = false;
    map.counts.assign(static_cast<std::size_t>(map.rows) * map.cols, 0.0);
    for (std::int64_t i = 0; i < a.size(); ++i) {
        if (a.at(i) == b.at(i)) continue;
        const std::int64_t r = i / cols * map.rows / rows;
        const std::int64_t c = i % cols * map.cols / cols;
        map.counts[static_cast<std::size_t>(r * map.cols + c)] += 1;
        any = true;
    }
    if (!any) map = {};
    return map;
}

std::pair<std::int64_t, std::int64_t> matrixView(const Shape& shape) {
    if (shape.empty()) return {1, 1};
    const std::int64_t rows = shape[0];
    return {rows, rows ? elementCount(shape) / rows : 0};
}

} // namespace ql
