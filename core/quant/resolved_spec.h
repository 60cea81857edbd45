#pragma once
// A QuantSpec resolved against one tensor shape: the layout, the operator's convention and the
// code type, after every constraint of the preset has been checked.
#include "quant/layout.h"
#include "quant/spec.h"
#include "tensor/shape.h"

#include <string>

namespace ql {

struct ResolvedSpec {
    QuantSpec spec;
    Shape shape; // what the layout indexes: the tensor's shape, or its view (tensorShape)
    /// The tensor's own shape when the plan quantizes it through a view (quant/weight_view.h: a conv
    /// [O, I, kh, kw] as [O, I*kh*kw]); empty when the plan takes the tensor as it is. A view is the
    /// same row-major values in the same order, so codes and values are the same bytes either way.
    Shape tensorShape;
    Layout layout;
    Convention convention;
    Target codeTarget = Target::Int8; // element code type (int4 for Ascend's packed "int32")
    Shape scaleShape;
    std::int64_t scaleCount = 1;
    bool scalarZeroPoint = false; // npu_group_quant: one offset for the whole tensor
    std::string notes;            // where the operator's documentation and implementation part

    std::int64_t qmin() const { return codeMin(codeTarget, spec.narrowRange); }
    std::int64_t qmax() const { return codeMax(codeTarget); }
    bool viewed() const { return !tensorShape.empty(); }
    /// The tensor's own shape, viewed or not: what a report shows and an export's values re-open as.
    const Shape& ownShape() const { return viewed() ? tensorShape : shape; }
    /// Shape of the natively packed output (int32 words: last dim / 8).
    Shape packedShape() const;
};

/// Resolves and validates; throws QuantError explaining which operator rule the request breaks.
ResolvedSpec resolveSpec(const QuantSpec& spec, const Shape& shape);

/// The convention a preset fixes for this spec (custom: spec.custom).
Convention conventionOf(const QuantSpec& spec);

} // namespace ql
