#include "tensor/shape.h"

#include "base/error.h"

namespace ql {

std::int64_t elementCount(const Shape& shape) {
    std::int64_t n = 1;
    for (auto d : shape)
        n *= d;
    return n;
}

Shape rowMajorStrides(const Shape& shape) {
    Shape strides(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * shape[d + 1];
    return strides;
}

std::string toString(const Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

int normalizeAxis(int axis, int rank) {
    if (axis < -rank || axis >= rank)
        throw QuantError("axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                         std::to_string(rank) + " (allowed: " + std::to_string(-rank) + " .. " +
                         std::to_string(rank - 1) + ")");
    return axis < 0 ? axis + rank : axis;
}

} // namespace ql
