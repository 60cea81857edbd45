#pragma once
// Numbers that files and flags hold as floats where an integer is meant (a group index stored as f32,
// a JSON count written 1e30). Converting a float outside an integer type's range is undefined
// behaviour, so each such value goes through here before it becomes an integer.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

namespace ql {

/// `v` as a T when it is a whole number within T's range; nullopt for NaN, ±Inf, a fraction, or a
/// value T cannot hold.
template <class T = std::int64_t> std::optional<T> wholeNumber(double v) {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 8);
    // T's bounds as doubles: min is a power of two (exact); max + 1 is one too, so compare below it.
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hiExclusive = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
    if (!std::isfinite(v) || v != std::trunc(v) || v < lo || v >= hiExclusive) return std::nullopt;
    return static_cast<T>(v);
}

/// A JSON value meant as a T: an integer, or a float with a whole value (128.0), within T's range;
/// nullopt for anything else (a string, 2.5, 1e30, a count T cannot hold).
template <class T = std::int64_t> std::optional<T> wholeNumber(const nlohmann::json& v) {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 8);
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
        return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        if constexpr (std::is_signed_v<T>) {
            if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                i > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
                return std::nullopt;
        } else if (i < 0 || static_cast<std::uint64_t>(i) > std::numeric_limits<T>::max()) {
            return std::nullopt;
        }
        return static_cast<T>(i);
    }
    if (v.is_number_float()) return wholeNumber<T>(v.get<double>());
    return std::nullopt;
}

} // namespace ql
