#pragma once
// Tensor shapes and NumPy-style axis handling.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace ql {

using Shape = std::vector<std::int64_t>;

/// Number of elements (1 for a scalar shape []).
std::int64_t elementCount(const Shape& shape);
/// Row-major strides in elements.
Shape rowMajorStrides(const Shape& shape);
/// "[4096, 11008]".
std::string toString(const Shape& shape);
/// Whether dimensions read from a file are safe to multiply: each fits int64, and so does the product
/// of the non-zero ones times `unitBytes` (a zero dimension makes the count 0, but strides and any
/// sub-shape still multiply the others). Readers check this before anything multiplies them.
template <typename Dims> bool dimensionsFit(const Dims& dims, std::uint64_t unitBytes = 1) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::uint64_t product = unitBytes;
    for (const auto d : dims) {
        if constexpr (std::is_signed_v<std::remove_cvref_t<decltype(d)>>)
            if (d < 0) return false;
        if (static_cast<std::uint64_t>(d) > kMax) return false;
        if (d != 0 && __builtin_mul_overflow(product, static_cast<std::uint64_t>(d), &product)) return false;
    }
    return product <= kMax;
}

/// ceil(n / d) for n >= 0 and d > 0, without the overflow of (n + d - 1) / d.
inline std::int64_t ceilDiv(std::int64_t n, std::int64_t d) {
    return n / d + (n % d != 0);
}

/// NumPy-style: axis in [-rank, rank) maps to [0, rank); throws QuantError otherwise.
int normalizeAxis(int axis, int rank);

} // namespace ql
