#pragma once
// QuantSpec: everything a user chooses for one quantization job.
#include "quant/convention.h"
#include "quant/target.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
    std::vector<int> axes{0};            // own-scale axes (PyTorch meaning)
    std::int64_t groupSize = 128;        // per-group
    std::vector<std::int64_t> block;     // block: elements per block per dim (one value: along axes[0])
    std::vector<std::int64_t> groupEnds; // ragged: cumulative row ends (npu_group_quant group_index)
    bool symmetric = true;
    bool narrowRange = false;
    std::optional<Rounding> rounding; // ascend-quant and custom only; presets fix their own
    bool sqrtMode = false;            // ascend-quant: scale applied twice, (x*s)*s
    Calibration calibration;
    std::optional<Convention> custom; // Preset::Custom: the convention to use
    bool operator==(const QuantSpec&) const = default;
};

/// Everything QuantLens knows about a preset beside its arithmetic (core/quant/presets.cpp): the
/// one table the CLI's help and checks, the GUI and the planner read. Adding a preset is a row here
/// plus its rules in presets.cpp.
struct PresetInfo {
    Preset preset;
    std::string_view name;       // the CLI's and the JSON's name
    std::string_view reproduces; // the operator, in words
    int formatBlock;      // scales per fixed block of this many elements (MX, NVFP4); 0: chosen by the user
    Target defaultTarget; // when no dtype is given
    std::array<bool, 8> targets; // which Target values the format defines (block formats; others: all)
};
/// Every preset, in the order the help and the GUI list them.
std::span<const PresetInfo> allPresets();
const PresetInfo& presetInfo(Preset p);
/// MX and NVFP4: blocks along the last axis with a scale per block, by the format's definition.
inline bool isBlockFormat(Preset p) {
    return presetInfo(p).formatBlock > 0;
}

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
