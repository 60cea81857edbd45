#include "quant/spec.h"

#include <cctype>
#include <cstdio>

#include <array>
#include <utility>

namespace ql {
namespace {

constexpr std::array<std::pair<Preset, std::string_view>, 9> kPresets = {{
    {Preset::Torch, "torch"},
    {Preset::TensorRT, "tensorrt"},
    {Preset::AclnnQuantize, "aclnn-quantize"},
    {Preset::AscendQuant, "ascend-quant"},
    {Preset::NpuGroupQuant, "npu-group-quant"},
    {Preset::PyPTO, "pypto"},
    {Preset::MX, "mx"},
    {Preset::NVFP4, "nvfp4"},
    {Preset::Custom, "custom"},
}};

constexpr std::array<std::pair<Scheme, std::string_view>, 5> kSchemes = {{
    {Scheme::PerTensor, "per-tensor"},
    {Scheme::PerChannel, "per-channel"},
    {Scheme::PerGroup, "per-group"},
    {Scheme::Block, "block"},
    {Scheme::Ragged, "ragged"},
}};

template <typename Table, typename E>
std::string_view lookupName(const Table& table, E value) {
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
    for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + std::to_string(axes[i]);
    return s;
}

} // namespace

std::string_view nameOf(Preset p) { return lookupName(kPresets, p); }
std::optional<Preset> presetFromName(std::string_view name) {
    std::string lower(name); // "TensorRT" is tensorrt
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lookupValue<Preset>(kPresets, lower);
}
std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    for (const auto& [p, n] : kPresets) names.emplace_back(n);
    return names;
}
std::string_view nameOf(Scheme s) { return lookupName(kSchemes, s); }
std::optional<Scheme> schemeFromName(std::string_view name) { return lookupValue<Scheme>(kSchemes, name); }

std::string_view nameOf(CalibMethod m) {
    switch (m) {
    case CalibMethod::AbsMax: return "absmax";
    case CalibMethod::MinMax: return "minmax";
    case CalibMethod::Percentile: return "percentile";
    case CalibMethod::Mse: return "mse";
    case CalibMethod::Entropy: return "entropy";
    case CalibMethod::Explicit: return "file";
    }
    return "";
}

std::string describe(const QuantSpec& spec) {
    std::string s = std::string(nameOf(spec.preset)) + " " + std::string(nameOf(spec.scheme));
    switch (spec.scheme) {
    case Scheme::PerTensor: break;
    case Scheme::PerChannel: s += "(axis " + joinAxes(spec.axes) + ")"; break;
    case Scheme::PerGroup:
        s += "(axis " + joinAxes(spec.axes) + ", group " + std::to_string(spec.groupSize) + ")";
        break;
    case Scheme::Block: {
        std::string b;
        for (std::size_t i = 0; i < spec.block.size(); ++i) b += (i ? "x" : "") + std::to_string(spec.block[i]);
        s += "(" + b + ")";
        break;
    }
    case Scheme::Ragged: s += "(" + std::to_string(spec.groupEnds.size()) + " groups)"; break;
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
