#pragma once
// Narrow floating formats: IEEE half, bfloat16, OCP FP8 (E4M3FN, E5M2), FP4 (E2M1) and the MX
// shared exponent E8M0. Encoders round to nearest, ties to even, keep subnormals, and handle
// overflow as each format defines (spec §6.1).
#include <cstdint>

namespace ql {

enum class Overflow : std::uint8_t {
    Saturate,      // |x| beyond max -> ±max, ±Inf -> ±max (TRT FP8, Ascend SAT, MX, __NV_SATFINITE)
    NonSaturating, // E4M3FN -> NaN, E5M2 -> ±Inf; E2M1 has neither and always saturates
};

enum class MiniFloat : std::uint8_t { E4M3FN, E5M2, E2M1 };

/// Encode an fp32 value; the sign is bit 7 (FP8) or bit 3 (FP4).
std::uint8_t encodeMiniFloat(float x, MiniFloat fmt, Overflow overflow);
/// Decode a code to fp32 (NaN codes give NaN, E5M2 Inf codes give ±Inf).
float decodeMiniFloat(std::uint8_t code, MiniFloat fmt);
/// Largest finite magnitude: 448, 57344, 6.
float maxFinite(MiniFloat fmt);
/// Largest unbiased exponent of a normal value (8, 15, 2): the MX "emax_elem".
int maxExponent(MiniFloat fmt);

float halfToFloat(std::uint16_t h);
std::uint16_t floatToHalf(float x); // RNE, overflow to Inf
inline float bf16ToFloat(std::uint16_t b) {
    std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}
std::uint16_t floatToBf16(float x); // RNE, NaN stays NaN

/// E8M0: 2^(code-127); 0xFF is NaN.
float decodeE8M0(std::uint8_t code);

std::uint32_t floatBits(float x);
float floatFromBits(std::uint32_t u);

} // namespace ql
