#pragma once
// The scalar reference quantizer: the oracle every faster path and backend must match bit for bit.
// Compiled with -ffp-contract=off; one element at a time, in the operator's operation order.
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <cstdint>
#include <span>

namespace ql {

/// Quantizes one value with an already-resolved scale and zero point.
std::int32_t quantizeValue(float x, float scale, float zeroPoint, const ResolvedSpec& plan);
/// What a code stands for before the inverse scale: q − zp, or the decoded minifloat.
float codeValue(std::int32_t code, float zeroPoint, const ResolvedSpec& plan);
/// Dequantizes one code: applyInverseScale(codeValue(q, zp), scale), the step following from the
/// convention's scale meaning.
float dequantizeValue(std::int32_t code, float scale, float zeroPoint, const ResolvedSpec& plan);

/// Quantizes a whole tensor (row-major floats, plan.shape) with the given parameters.
Codes quantizeReference(const ResolvedSpec& plan, const QuantParams& params, std::span<const float> x);
/// Dequantizes codes back to floats.
std::vector<float> dequantizeReference(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes);

/// Checks that `params` fit the plan (counts, positive / finite scales, zero-point range and
/// integrality where the operator takes integers); throws QuantError naming the rule.
void checkParams(const ResolvedSpec& plan, const QuantParams& params);

} // namespace ql
