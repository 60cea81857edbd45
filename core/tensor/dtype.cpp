#include "tensor/dtype.h"

#include <array>

namespace ql {
namespace {

struct DTypeInfo {
    DType type;
    int bits;
    bool floating;
    std::string_view name;
    std::string_view safetensors;
};

constexpr std::array kInfo = {
    DTypeInfo{DType::F64, 64, true, "f64", "F64"},
    DTypeInfo{DType::F32, 32, true, "f32", "F32"},
    DTypeInfo{DType::F16, 16, true, "f16", "F16"},
    DTypeInfo{DType::BF16, 16, true, "bf16", "BF16"},
    DTypeInfo{DType::I8, 8, false, "int8", "I8"},
    DTypeInfo{DType::U8, 8, false, "uint8", "U8"},
    DTypeInfo{DType::I16, 16, false, "int16", "I16"},
    DTypeInfo{DType::I32, 32, false, "int32", "I32"},
    DTypeInfo{DType::I64, 64, false, "int64", "I64"},
    DTypeInfo{DType::Bool, 8, false, "bool", "BOOL"},
    DTypeInfo{DType::F8E4M3, 8, true, "fp8-e4m3", "F8_E4M3"},
    DTypeInfo{DType::F8E5M2, 8, true, "fp8-e5m2", "F8_E5M2"},
    DTypeInfo{DType::I4, 4, false, "int4", ""},
    DTypeInfo{DType::U4, 4, false, "uint4", ""},
    DTypeInfo{DType::F4E2M1, 4, true, "fp4-e2m1", ""},
    DTypeInfo{DType::E8M0, 8, true, "e8m0", ""},
};

const DTypeInfo& info(DType t) {
    return kInfo[static_cast<std::size_t>(t)];
}

} // namespace

int bitsOf(DType t) {
    return info(t).bits;
}
int storageBytes(DType t) {
    return info(t).bits <= 8 ? 1 : info(t).bits / 8;
}
bool isFloating(DType t) {
    return info(t).floating;
}
std::string_view nameOf(DType t) {
    return info(t).name;
}
std::string_view safetensorsName(DType t) {
    return info(t).safetensors;
}

std::optional<DType> dtypeFromSafetensors(std::string_view name) {
    for (const auto& i : kInfo)
        if (!i.safetensors.empty() && i.safetensors == name) return i.type;
    return std::nullopt;
}

std::optional<DType> dtypeFromName(std::string_view name) {
    for (const auto& i : kInfo)
        if (i.name == name) return i.type;
    return std::nullopt;
}

} // namespace ql
