#pragma once
// QuantSpec: everything a user chooses for one quantization job (DESIGN "The quantization model").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quant/convention.h"
#include "quant/target.h"

namespace ql {

enum class Preset : std::uint8_t {
    Torch,         // torch.quantize_per_tensor / quantize_per_channel
    TensorRT,      // IQuantizeLayer (+ block quantization)
    AclnnQuantize, // aclnnQuantize
    AscendQuant,   // aclnnAscendQuantV3
    NpuGroupQuant, // torch_npu.npu_group_quant / aclnnGroupQuant
    PyPTO,         // pypto.quantize
    MX,            // OCP MXFP8 / MXFP4
    NVFP4,         // NVIDIA FP4 with E4M3 block scales
    Custom,        // every convention detail chosen by the user
};

enum class Scheme : std::uint8_t { PerTensor, PerChannel, PerGroup, Block, Ragged };

enum class CalibMethod : std::uint8_t {
    AbsMax,     // symmetric range from max |x|
    MinMax,     // asymmetric range [min(x,0), max(x,0)]
    Percentile, // clip at a percentile of |x| (or both tails when asymmetric)
    Mse,        // clip ratio minimising the quantization MSE of the group
    Entropy,    // TensorRT-style KL-divergence threshold on a |x| histogram
    Explicit,   // scales (and zero points) supplied by the caller
};

struct Calibration {
    CalibMethod method = CalibMethod::AbsMax;
    double percentile = 99.99;
    bool operator==(const Calibration&) const = default;
};

struct QuantSpec {
    Preset preset = Preset::Torch;
    Target target = Target::Int8;
    Scheme scheme = Scheme::PerChannel;
    std::vector<int> axes{0};              // own-scale axes (PyTorch meaning, spec/cli.md)
    std::int64_t groupSize = 128;          // per-group
    std::vector<std::int64_t> block;       // block: elements per block per dim (one value: along axes[0])
    std::vector<std::int64_t> groupEnds;   // ragged: cumulative row ends (npu_group_quant group_index)
    bool symmetric = true;
    bool narrowRange = false;
    std::optional<Rounding> rounding;      // ascend-quant and custom only; presets fix their own
    bool sqrtMode = false;                 // ascend-quant: scale applied twice, (x*s)*s
    Calibration calibration;
    std::optional<Convention> custom;      // Preset::Custom: the convention to use
    bool operator==(const QuantSpec&) const = default;
};

std::string_view nameOf(Preset p);
/// Case-insensitive ("TensorRT" is tensorrt).
std::optional<Preset> presetFromName(std::string_view name);
/// Every preset's name, in the order the help lists them.
std::vector<std::string> presetNames();
std::string_view nameOf(Scheme s);
std::optional<Scheme> schemeFromName(std::string_view name);
std::string_view nameOf(CalibMethod m);

/// One line a person can read: "torch per-channel(axis 0) int8 symmetric absmax".
std::string describe(const QuantSpec& spec);

} // namespace ql
