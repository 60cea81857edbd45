#include "analysis/mismatch_causes.h"

#include "quant/reference.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace ql {
namespace {

// Divide and reciprocal-multiply take a step; Multiply and MultiplyTwice take its inverse.
bool scaleIsStep(ScaleOp op) {
    return op == ScaleOp::Divide || op == ScaleOp::MultiplyReciprocal;
}

std::string scaleOpWords(ScaleOp op) {
    switch (op) {
    case ScaleOp::Divide:
        return "divides by the scale (x / s)";
    case ScaleOp::MultiplyReciprocal:
        return "multiplies by the reciprocal (x * fl32(1/s))";
    case ScaleOp::Multiply:
        return "multiplies by the scale (x * s)";
    case ScaleOp::MultiplyTwice:
        return "multiplies by the scale twice ((x * s) * s)";
    }
    return {};
}

std::string scaleOpShort(ScaleOp op) {
    switch (op) {
    case ScaleOp::Divide:
        return "division";
    case ScaleOp::MultiplyReciprocal:
        return "multiplication by the reciprocal";
    case ScaleOp::Multiply:
        return "multiplication";
    case ScaleOp::MultiplyTwice:
        return "double multiplication";
    }
    return {};
}

std::string zeroPointWords(ZeroPointStage s) {
    return s == ZeroPointStage::BeforeRounding ? "adds the zero point before rounding"
                                               : "adds the zero point after rounding";
}

// One candidate: a name, words, and A's convention with one detail taken from B.
struct Candidate {
    MismatchCause cause;
    Convention convention;
    bool useScalesOfB = false;
};

std::vector<Candidate> candidates(const ResolvedSpec& a, const ResolvedSpec& b, const std::string& la,
                                  const std::string& lb) {
    const Convention& ca = a.convention;
    const Convention& cb = b.convention;
    std::vector<Candidate> out;
    auto add = [&](std::string name, std::string summary, std::string detail, auto field, bool scalesOfB) {
        Convention c = ca;
        c.*field = cb.*field;
        out.push_back({{std::move(name), std::move(summary), std::move(detail), 0}, c, scalesOfB});
    };
    if (ca.scaleOp != cb.scaleOp)
        add("scale-op", scaleOpShort(ca.scaleOp) + " vs " + scaleOpShort(cb.scaleOp),
            la + " " + scaleOpWords(ca.scaleOp) + ", " + lb + " " + scaleOpWords(cb.scaleOp),
            &Convention::scaleOp, scaleIsStep(ca.scaleOp) != scaleIsStep(cb.scaleOp));
    if (ca.zeroPoint != cb.zeroPoint)
        add("zero-point-stage", "zero point added before vs after rounding",
            la + " " + zeroPointWords(ca.zeroPoint) + ", " + lb + " " + zeroPointWords(cb.zeroPoint),
            &Convention::zeroPoint, false);
    if (ca.rounding != cb.rounding)
        add("rounding",
            "rounding mode " + std::string(nameOf(ca.rounding)) + " vs " + std::string(nameOf(cb.rounding)),
            la + " rounds " + std::string(nameOf(ca.rounding)) + ", " + lb + " rounds " +
                std::string(nameOf(cb.rounding)),
            &Convention::rounding, false);
    if (ca.overflow != cb.overflow)
        add("overflow", "saturation vs overflow to NaN/Inf",
            la + " and " + lb + " handle out-of-range values differently", &Convention::overflow, false);
    if (ca.nan != cb.nan)
        add("nan", "NaN/Inf handling", la + " and " + lb + " map NaN/Inf inputs to different codes",
            &Convention::nan, false);
    // Same arithmetic, different parameters: calibration or scale rounding.
    out.push_back({{"scales", "different scales or zero points",
                    la + " and " + lb + " quantize with different scale or zero-point values", 0},
                   ca,
                   true});
    return out;
}

} // namespace

std::vector<MismatchCause> explainMismatches(const std::string& labelA, const std::string& labelB,
                                             const ResolvedSpec& planA, const QuantParams& paramsA,
                                             const ScaleIndexer& indexA, const ResolvedSpec& planB,
                                             const QuantParams& paramsB, const ScaleIndexer& indexB,
                                             const Codes& codesB, std::span<const float> x,
                                             const std::vector<std::int64_t>& mismatches) {
    std::vector<MismatchCause> out;
    if (planA.codeTarget != planB.codeTarget) return out; // different code types: nothing to replay
    for (auto& cand : candidates(planA, planB, labelA, labelB)) {
        ResolvedSpec p = planA;
        p.convention = cand.convention;
        for (std::int64_t i : mismatches) {
            const float xi = x[static_cast<std::size_t>(i)];
            const std::int64_t g = cand.useScalesOfB ? indexB.scaleIndexOf(i) : indexA.scaleIndexOf(i);
            const QuantParams& params = cand.useScalesOfB ? paramsB : paramsA;
            const float s = params.scales[static_cast<std::size_t>(g)];
            if (quantizeValue(xi, s, params.zeroPointOf(g), p) == codesB.at(i)) ++cand.cause.explained;
        }
        if (cand.cause.explained > 0) out.push_back(std::move(cand.cause));
    }
    std::stable_sort(out.begin(), out.end(), [](const MismatchCause& l, const MismatchCause& r) {
        return l.explained > r.explained;
    });
    return out;
}

std::string verdictOf(const Comparison& c) {
    if (c.count == 0) return "Nothing to compare: the tensor is empty.";
    if (c.mismatched == 0) {
        std::string v = "All " + std::to_string(c.count) + " codes agree.";
        if (c.scaleMismatches)
            v += " " + std::to_string(c.scaleMismatches) + " scales differ (up to " +
                 std::to_string(c.maxScaleUlp) + " ULP) without changing any code.";
        return v;
    }
    std::string v = std::to_string(c.mismatched) + " of " + std::to_string(c.count) + " codes differ. ";
    if (c.causes.empty()) {
        v += "No single convention difference explains them.";
    } else {
        const MismatchCause& best = c.causes.front();
        v += "Likely cause: " + best.summary + " — " + best.detail + "; this alone explains " +
             std::to_string(best.explained) + " of " + std::to_string(c.mismatched) + " mismatches.";
    }
    if (!c.examples.empty()) {
        const CodeMismatch& e = c.examples.front();
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      " Example: element %lld, x = %.9g (0x%08X), scale %.9g (0x%08X): %s %d, %s %d.",
                      static_cast<long long>(e.index), e.x, floatBits(e.x), e.scaleA, floatBits(e.scaleA),
                      c.labelA.c_str(), e.codeA, c.labelB.c_str(), e.codeB);
        v += buf;
    }
    return v;
}

} // namespace ql
