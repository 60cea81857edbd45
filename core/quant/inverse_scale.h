#pragma once
// x̂ from a code's value (the integer minus its zero point, or the decoded minifloat): the inverse
// of the operator's scale operation. One definition for the scalar reference (dequantizeValue),
// the analysis pass and the clip edges, so all three give the same bits.
#include "base/host_device.h"
#include "quant/convention.h"

namespace ql {

QL_HOST_DEVICE QL_FORCE_INLINE float applyInverseScale(float value, float scale, ScaleOp op) {
    switch (op) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal:
        return value * scale;
    case ScaleOp::Multiply:
        return value / scale;
    case ScaleOp::MultiplyTwice:
        return value / scale / scale;
    }
    return value;
}

} // namespace ql
