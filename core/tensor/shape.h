#pragma once
// Tensor shapes and NumPy-style axis handling.
#include <cstdint>
#include <string>
#include <vector>

namespace ql {

using Shape = std::vector<std::int64_t>;

/// Number of elements (1 for a scalar shape []).
std::int64_t elementCount(const Shape& shape);
/// Row-major strides in elements.
Shape rowMajorStrides(const Shape& shape);
/// "[4096, 11008]".
std::string toString(const Shape& shape);
/// NumPy-style: axis in [-rank, rank) maps to [0, rank); throws QuantError otherwise.
int normalizeAxis(int axis, int rank);

} // namespace ql
