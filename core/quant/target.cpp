#include "quant/target.h"

#include <array>
#include <limits>

namespace ql {
namespace {

struct TargetInfo {
    Target target;
    std::string_view name;
    std::int64_t min;
    std::int64_t max;
    DType storage;
};

constexpr std::array kTargets = {
    TargetInfo{Target::Int8, "int8", -128, 127, DType::I8},
    TargetInfo{Target::UInt8, "uint8", 0, 255, DType::U8},
    TargetInfo{Target::Int4, "int4", -8, 7, DType::I4},
    TargetInfo{Target::UInt4, "uint4", 0, 15, DType::U4},
    TargetInfo{Target::Int32, "int32", std::numeric_limits<std::int32_t>::min(),
               std::numeric_limits<std::int32_t>::max(), DType::I32},
    TargetInfo{Target::Fp8E4M3, "fp8-e4m3", 0, 255, DType::F8E4M3},
    TargetInfo{Target::Fp8E5M2, "fp8-e5m2", 0, 255, DType::F8E5M2},
    TargetInfo{Target::Fp4E2M1, "fp4-e2m1", 0, 15, DType::F4E2M1},
};

const TargetInfo& info(Target t) {
    return kTargets[static_cast<std::size_t>(t)];
}

} // namespace

bool isFloatTarget(Target t) {
    return t == Target::Fp8E4M3 || t == Target::Fp8E5M2 || t == Target::Fp4E2M1;
}
bool isSubByte(Target t) {
    return t == Target::Int4 || t == Target::UInt4 || t == Target::Fp4E2M1;
}

std::int64_t codeMin(Target t, bool narrow) {
    const auto m = info(t).min;
    return (narrow && m < 0) ? m + 1 : m;
}
std::int64_t codeMax(Target t) {
    return info(t).max;
}

MiniFloat miniFloatOf(Target t) {
    switch (t) {
    case Target::Fp8E5M2:
        return MiniFloat::E5M2;
    case Target::Fp4E2M1:
        return MiniFloat::E2M1;
    default:
        return MiniFloat::E4M3FN;
    }
}

DType codeDType(Target t) {
    return info(t).storage;
}
std::string_view nameOf(Target t) {
    return info(t).name;
}

std::optional<Target> targetFromName(std::string_view name) {
    for (const auto& i : kTargets)
        if (i.name == name) return i.target;
    return std::nullopt;
}

} // namespace ql
