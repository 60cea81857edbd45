#pragma once
// The jobs both benchmarks time (bench_quantize on the CPU, bench_cuda on a GPU), so their figures
// describe the same work.
#include "io/safetensors_writer.h"
#include "quant/spec.h"
#include "tensor/float_formats.h"
#include "tensor/tensor.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

/// The calibration and preset families the user-path benchmarks run, with the CLI flags that ask
/// for the same job.
struct Family {
    std::string name;
    QuantSpec spec;
    std::vector<std::string> cliFlags;
};

inline QuantSpec calibrated(QuantSpec s, CalibMethod m, double percentile = 99.9) {
    s.calibration.method = m;
    s.calibration.percentile = percentile;
    return s;
}

inline QuantSpec blockFormat(Preset p) {
    QuantSpec s;
    s.preset = p;
    s.target = Target::Fp4E2M1;
    s.scheme = Scheme::Block;
    s.axes = {-1};
    return s;
}

inline QuantSpec int4Blocks() {
    QuantSpec s;
    s.preset = Preset::TensorRT;
    s.target = Target::Int4;
    s.scheme = Scheme::Block;
    s.axes = {};
    s.block = {1, 128};
    return s;
}

inline std::vector<Family> families() {
    const QuantSpec pc = perChannelInt8();
    return {
        {"int8 per-channel, absmax", calibrated(pc, CalibMethod::AbsMax), {"--calib", "absmax"}},
        {"int8 per-channel, percentile 99.9",
         calibrated(pc, CalibMethod::Percentile),
         {"--calib", "percentile=99.9"}},
        {"int8 per-channel, mse", calibrated(pc, CalibMethod::Mse), {"--calib", "mse"}},
        {"int8 per-channel, entropy", calibrated(pc, CalibMethod::Entropy), {"--calib", "entropy"}},
        {"int4 block 1x128 (tensorrt)",
         int4Blocks(),
         {"--preset", "tensorrt", "--dtype", "int4", "--block", "1,128"}},
        {"fp8 e4m3 per-tensor",
         calibrated(tensorRtFp8(), CalibMethod::AbsMax),
         {"--preset", "tensorrt", "--dtype", "fp8-e4m3", "--scheme", "per-tensor"}},
        {"mxfp4", blockFormat(Preset::MX), {"--preset", "mx", "--dtype", "fp4-e2m1"}},
        {"nvfp4", blockFormat(Preset::NVFP4), {"--preset", "nvfp4"}},
    };
}

/// rows x cols values in `dtype` (F32 or BF16).
inline Tensor tensorOf(std::int64_t rows, std::int64_t cols, DType dtype, const std::vector<float>& x) {
    Tensor t = Tensor::fromFloats({rows, cols}, x);
    if (dtype == DType::BF16) {
        t = Tensor(DType::BF16, {rows, cols});
        auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
        for (std::size_t i = 0; i < x.size(); ++i)
            p[i] = floatToBf16(x[i]);
    }
    return t;
}

/// A safetensors file holding one tensor "w" of rows x cols values, in `dtype` (F32 or BF16).
inline void writeModel(const std::string& path, std::int64_t rows, std::int64_t cols, DType dtype,
                       const std::vector<float>& x) {
    writeSafetensors(path, {{"w", tensorOf(rows, cols, dtype, x)}});
}

/// Wall time of one quantlens-cli run, stdout and stderr discarded.
inline double cliMs(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        if (std::FILE* null = std::fopen("/dev/null", "w")) {
            dup2(fileno(null), 1);
            dup2(fileno(null), 2);
        }
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace ql::bench
