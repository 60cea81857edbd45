#include "quant/weight_view.h"

#include "base/error.h"

namespace ql {
namespace {

bool hasView(WeightRole role) {
    return role == WeightRole::Conv || role == WeightRole::PointwiseConv ||
           role == WeightRole::DepthwiseConv || role == WeightRole::KerasConv;
}

// The size of one group or block along `axis` under `spec` (0: it has none there). The role's spec names
// the axis (specForRole); per-dimension blocks give one size per dimension.
std::int64_t blockAlong(const QuantSpec& spec, int axis, std::size_t rank) {
    const bool alongAxis = !spec.axes.empty() && spec.axes.front() == axis;
    if (isBlockFormat(spec.preset)) return alongAxis ? presetInfo(spec.preset).formatBlock : 0;
    if (spec.scheme == Scheme::PerGroup) return alongAxis ? spec.groupSize : 0;
    if (spec.scheme != Scheme::Block) return 0;
    if (spec.block.size() == 1) return alongAxis ? spec.block.front() : 0;
    return spec.block.size() == rank ? spec.block[static_cast<std::size_t>(axis)] : 0;
}

// Why the view `shape` under `spec` holds no whole group or block along its reduction `axis` (empty when
// it does): a flattened kernel's few values (a depthwise 3x3's 9) are not a block of the format.
std::string shortOfOneBlock(const QuantSpec& spec, const Shape& shape, int axis) {
    if (axis < 0 || static_cast<std::size_t>(axis) >= shape.size()) return {};
    const std::int64_t block = blockAlong(spec, axis, shape.size());
    const std::int64_t n = shape[static_cast<std::size_t>(axis)];
    if (block <= 1 || n >= block) return {};
    const std::string values = std::to_string(n) + (n == 1 ? " value" : " values");
    std::string unit = spec.scheme == Scheme::PerGroup ? "group" : "block";
    if (spec.preset == Preset::MX) unit = "MX block";
    if (spec.preset == Preset::NVFP4) unit = "NVFP4 block";
    return values + " per output channel, fewer than one " + unit + " of " + std::to_string(block);
}

} // namespace

std::optional<Shape> flattenedView(const RoleAxes& role, const Shape& shape) {
    if (!hasView(role.role) || shape.size() < 3) return std::nullopt;
    if (role.role == WeightRole::KerasConv) // [k..., I, O] -> [k...*I, O]
        return Shape{elementCount(Shape(shape.begin(), shape.end() - 1)), shape.back()};
    return Shape{shape[0], elementCount(Shape(shape.begin() + 1, shape.end()))}; // [O, I*k...]
}

RoleAxes viewAxes(const RoleAxes& role) {
    RoleAxes v = role;
    const bool keras = role.role == WeightRole::KerasConv;
    v.channelAxis = keras ? 1 : 0;
    v.reductionAxis = keras ? 0 : 1;
    return v;
}

ResolvedSpec resolveViewed(const QuantSpec& spec, const Shape& shape, const Shape& view) {
    for (const Shape* s : {&shape, &view})
        for (std::int64_t d : *s)
            if (d < 0) throw QuantError("negative dimension in shape " + toString(*s));
    if (elementCount(shape) != elementCount(view))
        throw QuantError("a view " + toString(view) + " of " + toString(shape) + " must hold the same " +
                         std::to_string(elementCount(shape)) + " values");
    ResolvedSpec plan = resolveSpec(spec, view);
    plan.tensorShape = shape;
    plan.notes = "The tensor " + toString(shape) + " is quantized as " + toString(view) +
                 ", its kernel flattened into the reduction (the same values in the same order). " +
                 plan.notes;
    return plan;
}

ResolvedSpec planForRole(const QuantSpec& spec, const Shape& shape, const RoleAxes& role) {
    const std::optional<Shape> view = flattenedView(role, shape);
    const std::string what = std::string(nameOf(role.role)) + " " + std::string(layoutOf(role.role));
    const QuantSpec own = specForRole(spec, role);
    // As it is, where that fits: a short last block included (MX's 32 along a 1x1 conv's 8 input
    // channels is one block of 8, as MX pads it), blocks of one element not.
    std::string whyOwn;
    try {
        ResolvedSpec plan = resolveSpec(own, shape);
        whyOwn = degenerateLayout(plan);
        if (whyOwn.empty()) return plan;
        if (!view) throw QuantError(what + ": " + whyOwn); // the default came from the role: say which
    } catch (const QuantError& e) {
        if (!view) throw;
        whyOwn = e.what();
    }
    // The view: the most values the reduction holds. Too few for one group or block is the whole story.
    const RoleAxes axes = viewAxes(role);
    const QuantSpec viewed = specForRole(spec, axes);
    const std::string where = what + " " + toString(shape) + ": ";
    if (std::string few = shortOfOneBlock(viewed, *view, axes.reductionAxis); !few.empty())
        throw QuantError(where + few);
    std::string whyView;
    try {
        ResolvedSpec plan = resolveViewed(viewed, shape, *view);
        whyView = degenerateLayout(plan);
        if (whyView.empty()) return plan;
    } catch (const QuantError& e) {
        whyView = e.what();
    }
    // A kernel of one element (a 1x1 conv): the view is the tensor's reduction as it is, said once.
    if ((*view)[static_cast<std::size_t>(axes.reductionAxis)] ==
        shape[static_cast<std::size_t>(role.reductionAxis)])
        throw QuantError(where + whyView);
    throw QuantError(where + "as " + toString(*view) + " (the kernel flattened): " + whyView +
                     "; as it is: " + whyOwn);
}

ResolvedSpec planAsGiven(const QuantSpec& spec, const Shape& shape) {
    ResolvedSpec plan = resolveSpec(spec, shape);
    if (std::string why = degenerateLayout(plan); !why.empty()) throw QuantError(why);
    return plan;
}

} // namespace ql
