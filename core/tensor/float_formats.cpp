#include "tensor/float_formats.h"

#include <cmath>
#include <cstring>

namespace ql {
namespace {

struct Format {
    int expBits;
    int mantBits;
    int bias;
    bool hasInf; // E5M2
    bool hasNan; // E4M3FN, E5M2
    double maxValue;
};

const Format& formatOf(MiniFloat fmt) {
    static const Format kE4M3{4, 3, 7, false, true, 448.0};
    static const Format kE5M2{5, 2, 15, true, true, 57344.0};
    static const Format kE2M1{2, 1, 1, false, false, 6.0};
    switch (fmt) {
    case MiniFloat::E4M3FN:
        return kE4M3;
    case MiniFloat::E5M2:
        return kE5M2;
    case MiniFloat::E2M1:
        break;
    }
    return kE2M1;
}

std::uint8_t magnitudeCode(double value, const Format& f) {
    const double minNormal = std::ldexp(1.0, 1 - f.bias);
    if (value < minNormal) // subnormal: exponent field 0
        return static_cast<std::uint8_t>(value / std::ldexp(1.0, 1 - f.bias - f.mantBits));
    int e;
    std::frexp(value, &e); // value = m * 2^e, m in [0.5, 1)
    --e;
    const auto mant = static_cast<int>(value / std::ldexp(1.0, e - f.mantBits)) - (1 << f.mantBits);
    return static_cast<std::uint8_t>(((e + f.bias) << f.mantBits) | mant);
}

std::uint8_t nanCode(const Format& f) {
    // E4M3FN: S.1111.111; E5M2: S.11111.10 (quiet)
    return f.hasInf ? 0x7E : 0x7F;
}

} // namespace

std::uint8_t encodeMiniFloat(float x, MiniFloat fmt, Overflow overflow) {
    const Format& f = formatOf(fmt);
    const int signBit = f.expBits + f.mantBits;
    const std::uint8_t sign = std::signbit(x) ? static_cast<std::uint8_t>(1u << signBit) : 0;
    const std::uint8_t maxCode = magnitudeCode(f.maxValue, f);
    if (std::isnan(x))
        return f.hasNan ? static_cast<std::uint8_t>(sign | nanCode(f)) : maxCode; // E2M1: +6 (pypto)
    const bool saturate = overflow == Overflow::Saturate || !f.hasNan;
    if (std::isinf(x)) {
        if (saturate) return sign | maxCode;
        return sign | (f.hasInf ? 0x7C : nanCode(f));
    }
    const double a = std::fabs(static_cast<double>(x));
    if (a == 0.0) return sign;
    // Quantum (spacing) of the target at a's magnitude; rounding a/quantum in double is exact.
    int e;
    std::frexp(a, &e);
    --e;
    const int quantumExp = std::max(e, 1 - f.bias) - f.mantBits;
    const double rounded = std::nearbyint(std::ldexp(a, -quantumExp)); // ties to even
    const double value = std::ldexp(rounded, quantumExp);
    if (value > f.maxValue) {
        if (saturate) return sign | maxCode;
        return sign | (f.hasInf ? 0x7C : nanCode(f));
    }
    return sign | magnitudeCode(value, f);
}

float decodeMiniFloat(std::uint8_t code, MiniFloat fmt) {
    const Format& f = formatOf(fmt);
    const int signBit = f.expBits + f.mantBits;
    const bool negative = (code >> signBit) & 1;
    const int mag = code & ((1 << signBit) - 1);
    const int expField = mag >> f.mantBits;
    const int mant = mag & ((1 << f.mantBits) - 1);
    const int expMax = (1 << f.expBits) - 1;
    double v;
    if (f.hasInf && expField == expMax) {
        v = mant == 0 ? HUGE_VAL : NAN;
    } else if (f.hasNan && !f.hasInf && expField == expMax && mant == (1 << f.mantBits) - 1) {
        v = NAN;
    } else if (expField == 0) {
        v = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantBits);
    } else {
        v = std::ldexp(static_cast<double>(mant + (1 << f.mantBits)), expField - f.bias - f.mantBits);
    }
    return static_cast<float>(negative ? -v : v);
}

float maxFinite(MiniFloat fmt) {
    return static_cast<float>(formatOf(fmt).maxValue);
}

int maxExponent(MiniFloat fmt) {
    int e;
    std::frexp(formatOf(fmt).maxValue, &e);
    return e - 1;
}

std::uint32_t floatBits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}

float floatFromBits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    const int exp = (h >> 10) & 0x1F;
    const std::uint32_t mant = h & 0x3FF;
    if (exp == 0x1F) return floatFromBits(sign | 0x7F800000u | (mant << 13));
    if (exp == 0) {
        const float v = std::ldexp(static_cast<float>(mant), -24);
        return sign ? -v : v;
    }
    return floatFromBits(sign | (static_cast<std::uint32_t>(exp - 15 + 127) << 23) | (mant << 13));
}

std::uint16_t floatToHalf(float x) {
    const std::uint32_t u = floatBits(x);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
    if (std::isnan(x)) return sign | 0x7E00;
    const double a = std::fabs(static_cast<double>(x));
    if (a == 0.0) return sign;
    int e;
    std::frexp(a, &e);
    --e;
    const int quantumExp = std::max(e, -14) - 10;
    const double value = std::ldexp(std::nearbyint(std::ldexp(a, -quantumExp)), quantumExp);
    if (value >= 65536.0) return sign | 0x7C00;
    if (value < std::ldexp(1.0, -14)) return sign | static_cast<std::uint16_t>(value * std::ldexp(1.0, 24));
    std::frexp(value, &e);
    --e;
    const auto mant = static_cast<std::uint16_t>(std::ldexp(value, 10 - e) - 1024.0);
    return sign | static_cast<std::uint16_t>((e + 15) << 10) | mant;
}

std::uint16_t floatToBf16(float x) {
    std::uint32_t u = floatBits(x);
    if (std::isnan(x)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
    u += 0x7FFF + ((u >> 16) & 1);
    return static_cast<std::uint16_t>(u >> 16);
}

float decodeE8M0(std::uint8_t code) {
    if (code == 0xFF) return NAN;
    return std::ldexp(1.0f, static_cast<int>(code) - 127);
}

} // namespace ql
