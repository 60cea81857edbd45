#include "quant/weight_role.h"

#include <algorithm>
#include <cctype>

namespace ql {
namespace {

// A conv kernel is small; a trailing dimension wider than this is a matrix's (stacked experts
// [E, out, in]), not a kernel's.
constexpr std::int64_t kWidestKernel = 32;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

bool endsWith(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool contains(const std::string& s, std::string_view part) {
    return s.find(part) != std::string::npos;
}

RoleAxes axes(WeightRole role, int channel, int reduction, std::string basis) {
    return {role, channel, reduction, std::move(basis)};
}

// [O, I/group, k...]: pointwise when the kernel is one element, depthwise when each filter sees one
// input channel (a grouped conv, or without the graph's word (group 0), I == 1).
RoleAxes convRole(const Shape& shape, std::int64_t group, std::string basis) {
    bool pointwise = true;
    for (std::size_t d = 2; d < shape.size(); ++d)
        pointwise = pointwise && shape[d] == 1;
    WeightRole role = WeightRole::Conv;
    if (shape[1] == 1 && group != 1)
        role = WeightRole::DepthwiseConv;
    else if (pointwise)
        role = WeightRole::PointwiseConv;
    return axes(role, 0, 1, std::move(basis));
}

std::optional<RoleAxes> fromUse(const Shape& shape, const WeightUse& use) {
    const int rank = static_cast<int>(shape.size());
    const std::string basis = "ONNX " + use.op + " input " + std::to_string(use.input);
    if ((use.op == "MatMul" || use.op == "MatMulInteger") && use.input == 1)
        return axes(WeightRole::LinearInOut, rank - 1, rank - 2, basis);
    if (use.op == "Gemm" && use.input == 1 && rank == 2)
        return use.transB ? axes(WeightRole::Linear, 0, 1, basis + " (transB=1)")
                          : axes(WeightRole::LinearInOut, 1, 0, basis + " (transB=0)");
    if ((use.op == "Conv" || use.op == "ConvInteger") && use.input == 1 && rank >= 3)
        return convRole(shape, use.group, basis);
    if (use.op == "ConvTranspose" && use.input == 1 && rank >= 3)
        return axes(WeightRole::ConvTranspose, 1, 0, basis);
    if ((use.op == "GRU" || use.op == "LSTM" || use.op == "RNN") && (use.input == 1 || use.input == 2) &&
        rank == 3)
        return axes(WeightRole::Recurrent, 1, 2, basis);
    if (use.op == "Gather" && use.input == 0 && rank == 2) return axes(WeightRole::Embedding, 0, 1, basis);
    return std::nullopt; // another operator: the shape and name decide
}

} // namespace

std::string_view nameOf(WeightRole role) {
    switch (role) {
    case WeightRole::Linear:
        return "linear";
    case WeightRole::LinearInOut:
        return "linear-in-out";
    case WeightRole::Conv:
        return "conv";
    case WeightRole::PointwiseConv:
        return "pointwise-conv";
    case WeightRole::DepthwiseConv:
        return "depthwise-conv";
    case WeightRole::ConvTranspose:
        return "conv-transpose";
    case WeightRole::KerasConv:
        return "keras-conv";
    case WeightRole::Recurrent:
        return "recurrent";
    case WeightRole::Embedding:
        return "embedding";
    case WeightRole::Stacked:
        return "stacked";
    case WeightRole::Vector:
        return "vector";
    case WeightRole::Scalar:
        return "scalar";
    }
    return "?";
}

std::string_view layoutOf(WeightRole role) {
    switch (role) {
    case WeightRole::Linear:
        return "[out, in]";
    case WeightRole::LinearInOut:
        return "[in, out]";
    case WeightRole::Conv:
        return "[O, I/group, k...]";
    case WeightRole::PointwiseConv:
        return "[O, I, 1, 1]";
    case WeightRole::DepthwiseConv:
        return "[O, 1, k...]";
    case WeightRole::ConvTranspose:
        return "[I, O/group, k...]";
    case WeightRole::KerasConv:
        return "[k..., I, O]";
    case WeightRole::Recurrent:
        return "[dirs, gates*hidden, in]";
    case WeightRole::Embedding:
        return "[vocab, dim]";
    case WeightRole::Stacked:
        return "[..., out, in]";
    case WeightRole::Vector:
        return "[n]";
    case WeightRole::Scalar:
        return "[]";
    }
    return "?";
}

RoleAxes weightRole(const std::string& name, const Shape& shape, const std::optional<WeightUse>& use) {
    const int rank = static_cast<int>(shape.size());
    if (rank == 0) return axes(WeightRole::Scalar, 0, 0, "shape");
    if (rank == 1) return axes(WeightRole::Vector, 0, 0, "shape");
    if (use)
        if (auto r = fromUse(shape, *use)) return *r;
    const std::string n = lower(name);
    const bool kerasKernel = endsWith(n, "kernel") || endsWith(n, "kernel:0");
    if (rank == 2) {
        if (contains(n, "weight_ih") || contains(n, "weight_hh"))
            return axes(WeightRole::Recurrent, 0, 1, "name (PyTorch RNN)");
        if (kerasKernel) return axes(WeightRole::LinearInOut, 1, 0, "name (Keras kernel)");
        if (contains(n, "embed") || contains(n, "wte") || contains(n, "wpe"))
            return axes(WeightRole::Embedding, 0, 1, "name");
        return axes(WeightRole::Linear, 0, 1, "shape");
    }
    if (kerasKernel) return axes(WeightRole::KerasConv, rank - 1, rank - 2, "name (Keras kernel)");
    const bool kernelLike =
        std::all_of(shape.begin() + 2, shape.end(), [](std::int64_t d) { return d <= kWidestKernel; });
    if (kernelLike) return convRole(shape, 0, "shape");
    return axes(WeightRole::Stacked, rank - 2, rank - 1, "shape");
}

std::string notAWeight(const RoleAxes& role) {
    if (role.role == WeightRole::Scalar) return "a scalar, not a weight";
    if (role.role == WeightRole::Vector) return "a bias, norm or scale vector (rank 1), not a weight";
    return {};
}

QuantSpec specForRole(const QuantSpec& spec, const RoleAxes& role) {
    QuantSpec s = spec;
    switch (spec.scheme) {
    case Scheme::PerTensor:
    case Scheme::Ragged: // groups of rows: npu_group_quant's axis 0
        break;
    case Scheme::PerChannel:
        s.axes = {role.channelAxis};
        break;
    case Scheme::PerGroup:
        s.axes = {role.reductionAxis};
        break;
    case Scheme::Block:
        if (isBlockFormat(spec.preset) || spec.block.size() <= 1) s.axes = {role.reductionAxis};
        break;
    }
    return s;
}

std::string degenerateLayout(const ResolvedSpec& plan) {
    const Shape& shape = plan.shape;
    if (shape.size() < 2) return {};
    if (plan.spec.scheme != Scheme::PerGroup && plan.spec.scheme != Scheme::Block) return {};
    const char* pick = "(pick an axis the blocks fit, or per-channel)";
    if (plan.scaleCount >= elementCount(shape)) {
        for (std::size_t d = 0; d < shape.size(); ++d) {
            const DimMapping& m = plan.layout.dims[d];
            if (m.kind == DimMapping::Kind::Block)
                return "blocks of " + std::to_string(m.block) + " along axis " + std::to_string(d) +
                       ", which has " + std::to_string(shape[d]) + " element" + (shape[d] == 1 ? "" : "s") +
                       " in " + toString(shape) +
                       ", hold one element each: every value would get its own scale " + pick;
        }
        return "every group holds one element in " + toString(shape) +
               ": every value would get its own scale";
    }
    // Blocks that do not divide the axis end with a short one; one of a single element is the same
    // degenerate scale (MX's 32 along a conv's 65 input channels).
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const DimMapping& m = plan.layout.dims[d];
        if (m.kind == DimMapping::Kind::Block && m.block > 1 && shape[d] > m.block && shape[d] % m.block == 1)
            return "blocks of " + std::to_string(m.block) + " along axis " + std::to_string(d) +
                   ", which has " + std::to_string(shape[d]) + " elements in " + toString(shape) +
                   ", end with a block of one element: its value would get a scale of its own " + pick;
    }
    return {};
}

std::string describe(const RoleAxes& role) {
    std::string s =
        std::string(nameOf(role.role)) + " " + std::string(layoutOf(role.role)) + " (" + role.basis + ")";
    if (role.role == WeightRole::Scalar || role.role == WeightRole::Vector) return s;
    return s + ": channel axis " + std::to_string(role.channelAxis) + ", reduction axis " +
           std::to_string(role.reductionAxis);
}

} // namespace ql
