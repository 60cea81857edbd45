#pragma once
// Calibration: how scales and zero points come from the data, per scale group.
#include <span>

#include "quant/params.h"
#include "quant/plan.h"

namespace ql {

/// Computes operator-native scales (and zero points when asymmetric) for every scale group.
/// MX and NVFP4 use their own block-scale rules. A zero range never divides by zero: its step is 1.
/// Throws QuantError for CalibMethod::Explicit (the caller supplies those).
QuantParams calibrate(const QuantPlan& plan, std::span<const float> x);

/// Converts a quantization step (x ≈ q * step) into the operator's scale value.
float operatorScaleFromStep(double step, const Convention& c);
/// The step (x ≈ q * step) an operator scale stands for.
double stepFromOperatorScale(float scale, const Convention& c);

/// Explicit scales given for one convention, re-expressed for another (same step): a torch scale
/// file compared under ascend-quant means the inverse there.
QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to);

} // namespace ql
