#include "quant/spec.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <utility>

namespace ql {
namespace {

constexpr std::array<bool, 8> kAnyTarget{true, true, true, true, true, true, true, true};
// Int8, UInt8, Int4, UInt4, Int32, Fp8E4M3, Fp8E5M2, Fp4E2M1
constexpr std::array<bool, 8> kMxTargets{false, false, false, false, false, true, true, true};
constexpr std::array<bool, 8> kNvfp4Targets{false, false, false, false, false, false, false, true};

constexpr std::array<PresetInfo, 9> kPresets = {{
    {Preset::Torch, "torch", "torch.quantize_per_tensor / quantize_per_channel", 0, Target::Int8, kAnyTarget},
    {Preset::TensorRT, "tensorrt", "TensorRT IQuantizeLayer (and block quantization)", 0, Target::Int8,
     kAnyTarget},
    {Preset::AclnnQuantize, "aclnn-quantize", "Ascend aclnnQuantize", 0, Target::Int8, kAnyTarget},
    {Preset::AscendQuant, "ascend-quant", "Ascend aclnnAscendQuantV3", 0, Target::Int8, kAnyTarget},
    {Preset::NpuGroupQuant, "npu-group-quant", "torch_npu.npu_group_quant / aclnnGroupQuant", 0, Target::Int8,
     kAnyTarget},
    {Preset::PyPTO, "pypto", "pypto.quantize", 0, Target::Int8, kAnyTarget},
    {Preset::MX, "mx", "OCP Microscaling (MXFP8 / MXFP4), E8M0 scale per 32 elements", 32, Target::Fp8E4M3,
     kMxTargets},
    {Preset::NVFP4, "nvfp4", "NVIDIA NVFP4, E4M3 scale per 16 elements and an fp32 tensor scale", 16,
     Target::Fp4E2M1, kNvfp4Targets},
    {Preset::Custom, "custom", "every convention detail chosen by the user", 0, Target::Int8, kAnyTarget},
}};
// One row per enumerator, in enumerator order (presetInfo indexes by value).
static_assert(kPresets.size() == static_cast<std::size_t>(Preset::Custom) + 1);
static_assert([] {
    for (std::size_t i = 0; i < kPresets.size(); ++i)
        if (static_cast<std::size_t>(kPresets[i].preset) != i) return false;
    return true;
}());

constexpr std::array<std::pair<Scheme, std::string_view>, 5> kSchemes = {{
    {Scheme::PerTensor, "per-tensor"},
    {Scheme::PerChannel, "per-channel"},
    {Scheme::PerGroup, "per-group"},
    {Scheme::Block, "block"},
    {Scheme::Ragged, "ragged"},
}};

template <typename Table, typename E> std::string_view lookupName(const Table& table, E value) {
    for (const auto& [v, n] : table)
        if (v == value) return n;
    return "";
}

template <typename E, typename Table>
std::optional<E> lookupValue(const Table& table, std::string_view name) {
    for (const auto& [v, n] : table)
        if (n == name) return v;
    return std::nullopt;
}

std::string joinAxes(const std::vector<int>& axes) {
    std::string s;
    for (std::size_t i = 0; i < axes.size(); ++i)
        s += (i ? "," : "") + std::to_string(axes[i]);
    return s;
}

} // namespace

std::span<const PresetInfo> allPresets() {
    return kPresets;
}
const PresetInfo& presetInfo(Preset p) {
    return kPresets.at(static_cast<std::size_t>(p));
}

std::string_view nameOf(Preset p) {
    return presetInfo(p).name;
}
std::optional<Preset> presetFromName(std::string_view name) {
    std::string lower(name); // "TensorRT" is tensorrt
    for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& info : kPresets)
        if (info.name == lower) return info.preset;
    return std::nullopt;
}
std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    names.reserve(kPresets.size());
    for (const auto& info : kPresets)
        names.emplace_back(info.name);
    return names;
}
std::string_view nameOf(Scheme s) {
    return lookupName(kSchemes, s);
}
std::optional<Scheme> schemeFromName(std::string_view name) {
    return lookupValue<Scheme>(kSchemes, name);
}

std::string_view nameOf(CalibMethod m) {
    switch (m) {
    case CalibMethod::AbsMax:
        return "absmax";
    case CalibMethod::MinMax:
        return "minmax";
    case CalibMethod::Percentile:
        return "percentile";
    case CalibMethod::Mse:
        return "mse";
    case CalibMethod::Entropy:
        return "entropy";
    case CalibMethod::Explicit:
        return "file";
    }
    return "";
}

std::string describe(const QuantSpec& spec) {
    std::string s = std::string(nameOf(spec.preset)) + " " + std::string(nameOf(spec.scheme));
    switch (spec.scheme) {
    case Scheme::PerTensor:
        break;
    case Scheme::PerChannel:
        s += "(axis " + joinAxes(spec.axes) + ")";
        break;
    case Scheme::PerGroup:
        s += "(axis " + joinAxes(spec.axes) + ", group " + std::to_string(spec.groupSize) + ")";
        break;
    case Scheme::Block: {
        std::string b;
        for (std::size_t i = 0; i < spec.block.size(); ++i)
            b += (i ? "x" : "") + std::to_string(spec.block[i]);
        // MX and NVFP4 fix their own block, whatever the spec's block holds (the plan ignores it).
        if (isBlockFormat(spec.preset)) b = std::to_string(presetInfo(spec.preset).formatBlock);
        s += "(" + b + ")";
        break;
    }
    case Scheme::Ragged:
        s += "(" + std::to_string(spec.groupEnds.size()) + " groups)";
        break;
    }
    s += " " + std::string(nameOf(spec.target));
    s += spec.symmetric ? " symmetric" : " asymmetric";
    if (spec.narrowRange) s += " narrow";
    if (spec.sqrtMode) s += " sqrt-mode";
    if (spec.rounding) s += " round=" + std::string(nameOf(*spec.rounding));
    s += " " + std::string(nameOf(spec.calibration.method));
    if (spec.calibration.method == CalibMethod::Percentile) {
        char p[32]; // "99.99", not std::to_string's "99.990000"
        std::snprintf(p, sizeof p, "%.10g", spec.calibration.percentile);
        s += std::string("=") + p;
    }
    return s;
}

} // namespace ql
