#pragma once
// Calibration: how scales and zero points come from the data, per scale group.
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "tensor/dtype.h"

#include <span>

namespace ql {

/// The scalar oracle: computes operator-native scales (and zero points when asymmetric) for every
/// scale group, one element at a time. MX and NVFP4 use their own block-scale rules (absmax) or
/// search each block's code (mse). A zero range never divides by zero: its step is 1. Sets
/// QuantParams::calibrationNote when the ranges clip far more than absmax would.
/// Throws QuantError for CalibMethod::Explicit (the caller supplies those) and impossible requests.
QuantParams calibrate(const ResolvedSpec& plan, std::span<const float> x);

/// The same answer, bit for bit, read from the tensor in place: `data` holds elementCount(plan.shape)
/// row-major values of `dtype` (F32, BF16 or F16; any alignment), widened on the fly, never copied.
/// `threads` workers (0: one per hardware thread) split rows or groups; everything they merge is
/// an integer count or a min / max, so the result does not depend on the thread count. Throws
/// QuantError as calibrate does, and for any other dtype.
QuantParams calibrateFast(const ResolvedSpec& plan, const void* data, DType dtype, unsigned threads);

/// Converts a quantization step (x ≈ q * step) into the operator's scale value.
float operatorScaleFromStep(double step, const Convention& c);
/// The step (x ≈ q * step) an operator scale stands for.
double stepFromOperatorScale(float scale, const Convention& c);

/// Explicit scales given for one convention, re-expressed for another (same step): a torch scale
/// file compared under ascend-quant means the inverse there.
QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to);

} // namespace ql
