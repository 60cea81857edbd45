#pragma once
// A weight's role in its model: which axis is its output channel and
// which its reduction axis, from its layout, its name and, where the file says, the operator that
// consumes it. Defaults follow the role: per-channel scales on the output channel, groups and blocks
// along the reduction axis. This table is the one place that decides them, for the CLI, the app and
// the Python module alike; a default is never carried over from another tensor or model.
#include "quant/resolved_spec.h"
#include "quant/spec.h"
#include "tensor/shape.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ql {

/// How the model's graph uses a weight, where the file records it (ONNX: the node consuming it).
struct WeightUse {
    std::string op;         // the operator type: "MatMul", "Gemm", "Conv", "GRU", "Gather", ...
    int input = 0;          // which of its inputs the weight is
    bool transB = false;    // Gemm's transB
    std::int64_t group = 1; // Conv's group
    bool operator==(const WeightUse&) const = default;
};

enum class WeightRole : std::uint8_t {
    Linear,        // [out, in]: PyTorch Linear, ONNX Gemm with transB=1
    LinearInOut,   // [in, out]: ONNX MatMul, Gemm with transB=0, Keras Dense
    Conv,          // [O, I/group, k...]: PyTorch and ONNX Conv
    PointwiseConv, // [O, I, 1, 1]: a conv whose kernel is one element
    DepthwiseConv, // [O, 1, k...]: one input channel per filter
    ConvTranspose, // [I, O/group, k...]
    KerasConv,     // [k..., I, O]: Keras / TensorFlow kernels
    Recurrent,     // GRU / LSTM / RNN gates: [gates*hidden, in] or ONNX's [dirs, gates*hidden, in]
    Embedding,     // [vocab, dim]: a lookup table (ONNX Gather, an "embed" name)
    Stacked,       // [..., out, in]: rank 3+ with a wide trailing dimension (stacked experts)
    Vector,        // rank 1: biases, norms, scales
    Scalar,        // rank 0
};

/// A role and the axes its defaults use (normalised, >= 0; 0 for a scalar).
struct RoleAxes {
    WeightRole role = WeightRole::Linear;
    int channelAxis = 0;   // per-channel scales: one per output channel
    int reductionAxis = 0; // groups and blocks: along what the operator sums over
    std::string basis;     // what decided it: "ONNX MatMul input 1", "shape", "name"
};

std::string_view nameOf(WeightRole role);
/// The role's layout in words: "[out, in]", "[O, I, kh, kw]".
std::string_view layoutOf(WeightRole role);

/// The role of a weight named `name` of `shape`; `use` when the file says how the graph uses it.
RoleAxes weightRole(const std::string& name, const Shape& shape, const std::optional<WeightUse>& use = {});

/// Why a tensor of this role is not a weight (a rank-1 bias, norm or scale vector; a scalar), which
/// whole-model runs keep as it is unless told to include non-weights; empty for a weight.
std::string notAWeight(const RoleAxes& role);

/// The spec for one tensor of this role when the user named no axis: per-channel (and ragged: rows
/// stay axis 0) on the channel axis, per-group, single-size blocks and MX / NVFP4 along the reduction
/// axis. Per-tensor and per-dimension blocks ("R,C") have no axis to choose and are returned as given.
QuantSpec specForRole(const QuantSpec& spec, const RoleAxes& role);

/// Why the plan's layout quantizes nothing useful: every group or block holds one element (a block
/// along a dimension of size 1, as MX along the last axis of a 1x1 conv `[O, I, 1, 1]`), or the blocks
/// end with one of a single element (32 along 65). Empty when the layout is fine. Rank-1 and smaller
/// tensors are never refused here.
std::string degenerateLayout(const ResolvedSpec& plan);

/// One line for a report and the app: "conv [O, I/group, k...] (ONNX Conv input 1): channel axis 0,
/// reduction axis 1".
std::string describe(const RoleAxes& role);

} // namespace ql
