#pragma once
// Element types QuantLens reads (model files) and writes (quantized codes).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ql {

enum class DType : std::uint8_t {
    F64,
    F32,
    F16,
    BF16, // floating inputs
    I8,
    U8,
    I16,
    I32,
    I64,
    Bool, // integer storage (safetensors / HDF5)
    F8E4M3,
    F8E5M2, // OCP FP8 (E4M3 is the "fn" variant: no Inf)
    I4,
    U4,
    F4E2M1, // sub-byte codes, one per byte when unpacked
    E8M0,   // MX shared exponent
};

/// Bits per element as stored unpacked (sub-byte types report 4).
int bitsOf(DType t);
/// Bytes per element in a file; sub-byte types are stored one per byte unpacked.
int storageBytes(DType t);
bool isFloating(DType t);
/// Canonical lower-case name ("f32", "bf16", "fp8-e4m3", ...).
std::string_view nameOf(DType t);
/// safetensors dtype string ("F32", "F8_E4M3", ...); empty for types safetensors has no name for.
std::string_view safetensorsName(DType t);
std::optional<DType> dtypeFromSafetensors(std::string_view name);
std::optional<DType> dtypeFromName(std::string_view name);

} // namespace ql
