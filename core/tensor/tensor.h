#pragma once
// A tensor is typed bytes with a shape. The bytes are either owned or borrowed from a mapping
// that the `keepAlive` handle keeps open (memory-mapped model files), so loading is lazy and copy-free.
#include "tensor/dtype.h"
#include "tensor/shape.h"

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace ql {

class Tensor {
public:
    Tensor() = default;
    /// Owned storage, zero-filled.
    Tensor(DType dtype, Shape shape);
    /// Borrowed storage; `keepAlive` owns whatever the bytes live in.
    Tensor(DType dtype, Shape shape, const std::byte* data, std::shared_ptr<const void> keepAlive);
    /// An f32 tensor holding a copy of `values`.
    static Tensor fromFloats(Shape shape, std::span<const float> values);

    DType dtype() const { return m_dtype; }
    const Shape& shape() const { return m_shape; }
    int rank() const { return static_cast<int>(m_shape.size()); }
    std::int64_t elementCount() const { return ql::elementCount(m_shape); }
    std::size_t byteSize() const;
    const std::byte* data() const { return m_data; }
    std::byte* mutableData(); // only for owned tensors

    /// Converts elements [begin, begin+count) to f32 (exact for every input type but f64/i32/i64).
    void toFloat(std::int64_t begin, std::int64_t count, float* out) const;
    /// Whole tensor as f32 (one copy).
    std::vector<float> toFloatVector() const;

private:
    DType m_dtype = DType::F32;
    Shape m_shape;
    const std::byte* m_data = nullptr;
    std::shared_ptr<const void> m_keepAlive;
    std::shared_ptr<std::vector<std::byte>> m_owned;
};

} // namespace ql
