#pragma once
// The jobs both benchmarks time (bench_quantize on the CPU, bench_cuda on a GPU), so their figures
// describe the same work.
#include "quant/spec.h"

namespace ql::bench {

/// torch per-tensor int8.
inline QuantSpec perTensorInt8() {
    QuantSpec s;
    s.scheme = Scheme::PerTensor;
    s.axes = {};
    return s;
}

/// torch per-channel (axis 0) int8: the default spec.
inline QuantSpec perChannelInt8() {
    return QuantSpec{};
}

/// absmax per 128 elements along the last axis, int4, divide, half-even (custom convention).
inline QuantSpec perGroupInt4G128() {
    QuantSpec s;
    s.preset = Preset::Custom;
    s.target = Target::Int4;
    s.scheme = Scheme::PerGroup;
    s.axes = {-1};
    s.groupSize = 128;
    Convention c;
    c.scaleOp = ScaleOp::Divide;
    c.zeroPoint = ZeroPointStage::BeforeRounding;
    s.custom = c;
    return s;
}

/// TensorRT per-tensor FP8 E4M3.
inline QuantSpec tensorRtFp8() {
    QuantSpec s;
    s.preset = Preset::TensorRT;
    s.target = Target::Fp8E4M3;
    s.scheme = Scheme::PerTensor;
    s.axes = {};
    return s;
}

} // namespace ql::bench
