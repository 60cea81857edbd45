#pragma once
// A weight quantized through its role's 2-D view: groups and blocks run along the reduction axis, which
// for a conv is its input channels flattened with the kernel. A conv [O, I, kh, kw] sums over I*kh*kw
// values per output channel; a user quantizing it for an operator that takes 2-D weights (Ascend's
// last-two-axes rule, a block format along one contiguous axis) views it as [O, I*kh*kw]. The data is
// row-major, so the view is the same values in the same order: the plan indexes the view and records
// the tensor's own shape (ResolvedSpec::tensorShape), and codes and values keep their bytes.
#include "quant/resolved_spec.h"
#include "quant/weight_role.h"

#include <optional>
#include <string>

namespace ql {

/// The role's 2-D view of `shape`, where the role has one: a conv [O, I/group, k...] (pointwise and
/// depthwise alike) as [O, I*k...], a Keras kernel [k..., I, O] as [k...*I, O]. nullopt for the other
/// roles and for tensors of rank 2 or less.
std::optional<Shape> flattenedView(const RoleAxes& role, const Shape& shape);

/// The role's axes on its view: the output channel and the flattened reduction.
RoleAxes viewAxes(const RoleAxes& role);

/// `spec` resolved against `view`, a view of a tensor of `shape` with the same element count; the plan
/// records `shape` and its notes say how it was viewed. Throws QuantError as resolveSpec does.
ResolvedSpec resolveViewed(const QuantSpec& spec, const Shape& shape, const Shape& view);

/// The plan of `spec` for a tensor of this role when no axis was named: the rule every job uses (the
/// CLI, the app's Quantize all, plan, Python). The role's axes on the tensor as it is (specForRole)
/// when that layout fits (it resolves and is not degenerate: a short last block fits, as MX's 32 over
/// a 1x1 conv's 8 input channels), else its view's axes on the view (flattenedView), which must also
/// hold one whole group or block along its reduction (a depthwise 3x3 has 9 values per output channel:
/// no MX block of 32). Throws QuantError naming the tensor's shape and why no layout fits.
ResolvedSpec planForRole(const QuantSpec& spec, const Shape& shape, const RoleAxes& role);

/// The plan of `spec` along the axes the user named, as given (the CLI's --axis, the app's picked
/// axis, Python's axis=): refused with the reason (QuantError) where every block holds one element.
ResolvedSpec planAsGiven(const QuantSpec& spec, const Shape& shape);

} // namespace ql
