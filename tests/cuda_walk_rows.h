#pragma once
// The layouts the cuda kernels' bodies are checked on, on the host (tst_cuda_walk, tst_cuda_statistics):
// one row per mapping rule the kernels have, on shapes whose last dimension is and is not a multiple
// of the vector width.
#include "backend_test_util.h"
#include "cuda/cuda_plan.h"

#include <stdexcept>
#include <vector>

namespace qltest {

struct WalkRow {
    const char* name;
    ql::QuantSpec spec;
    ql::Shape shape;
};

inline std::vector<WalkRow> walkRows() {
    using namespace ql;
    using P = Preset;
    using T = Target;
    using S = Scheme;
    std::vector<WalkRow> rows;
    auto add = [&](const char* n, QuantSpec s, Shape shape) {
        try {
            resolveSpec(s, shape);
        } catch (const std::exception&) {
            // NVFP4 blocks must divide the last dimension: the one refusal the grid expects. Any
            // other row is kept, so a planner regression fails loudly instead of shrinking the grid.
            if (s.preset == Preset::NVFP4 && !shape.empty() && shape.back() % 16 != 0) return;
        }
        rows.push_back({n, std::move(s), std::move(shape)});
    };
    for (const Shape& shape : {Shape{33, 129}, Shape{8, 64}, Shape{7}, Shape{1, 1031}}) {
        add("torch/per-tensor/int8", calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}), shape);
        add("torch/per-tensor/uint8-asym", calibratedSpec(P::Torch, T::UInt8, S::PerTensor, {}, false),
            shape);
        add("torch/per-channel-last/int32", calibratedSpec(P::Torch, T::Int32, S::PerChannel, {-1}), shape);
        add("tensorrt/per-tensor/fp8", calibratedSpec(P::TensorRT, T::Fp8E4M3, S::PerTensor, {}), shape);
        add("mx/fp4", calibratedSpec(P::MX, T::Fp4E2M1, S::Block, {}), shape);
    }
    for (const Shape& shape : {Shape{33, 129}, Shape{8, 64}, Shape{3, 5, 64}, Shape{5, 3, 7, 9}}) {
        add("torch/per-channel0/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0}), shape);
        add("aclnn-quantize/per-channel-last/fp8-e5m2",
            calibratedSpec(P::AclnnQuantize, T::Fp8E5M2, S::PerChannel, {-1}), shape);
        add("ascend-quant/per-channel-last/int8-asym",
            calibratedSpec(P::AscendQuant, T::Int8, S::PerChannel, {-1}, false), shape);
        QuantSpec pg = calibratedSpec(P::Custom, T::Int4, S::PerGroup, {-1});
        pg.groupSize = 16;
        add("custom/per-group-last-g16/int4", pg, shape);
        pg.axes = {0};
        pg.groupSize = 2;
        add("custom/per-group-axis0-g2/int4", pg, shape);
        add("custom/per-channel-axes-0-and-last/uint8",
            calibratedSpec(P::Custom, T::UInt8, S::PerChannel, {0, -1}, false), shape);
        add("nvfp4/fp4", calibratedSpec(P::NVFP4, T::Fp4E2M1, S::Block, {}), shape);
    }
    add("torch/per-channel-middle/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {1}), {3, 5, 64});
    add("torch/per-channel-middle/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {1}), {5, 3, 7, 9});
    QuantSpec blk = calibratedSpec(P::TensorRT, T::Int4, S::Block, {});
    blk.block = {4, 16};
    add("tensorrt/block-4x16/int4", blk, {12, 64});
    QuantSpec ragged = calibratedSpec(P::NpuGroupQuant, T::Int8, S::Ragged, {});
    ragged.groupEnds = {0, 3, 3, 10, 11};
    ragged.symmetric = false;
    ragged.calibration.method = CalibMethod::MinMax;
    add("npu-group-quant/ragged-rows-empty-groups/int8", ragged, {11, 24});
    QuantSpec raggedLast = calibratedSpec(P::Custom, T::Int8, S::Ragged, {-1});
    raggedLast.groupEnds = {0, 0, 5, 5, 17, 37};
    add("custom/ragged-last-empty-first-groups/int8", raggedLast, {6, 37});
    add("custom/ragged-last-empty-first-groups/int8", raggedLast, {37});
    add("torch/per-tensor/scalar", calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}), Shape{});
    add("torch/per-channel0/empty", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0}), {4, 0});
    return rows;
}

/// The kernels' arguments over host memory (not yet configured for a grid): `map` (buildScaleMap of
/// the plan) and `params` must outlive them.
inline ql::cuda::QuantizeArgs hostArgs(const ql::ResolvedSpec& plan, const ql::cuda::HostScaleMap& map,
                                       const ql::QuantParams& params, std::int64_t count) {
    ql::cuda::QuantizeArgs a{};
    a.op = ql::cuda::elementOpFor(plan);
    a.map = map.hostView();
    a.scales = params.scales.data();
    a.zeroPoints = params.zeroPoints.data();
    a.zeroPointMode = ql::cuda::zeroPointModeOf(params);
    a.count = count;
    return a;
}

} // namespace qltest
