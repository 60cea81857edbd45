#include "tensor/tensor.h"

#include "tensor/float_formats.h"

#include <cstring>
#include <stdexcept>

namespace ql {

Tensor::Tensor(DType dtype, Shape shape)
    : m_dtype(dtype)
    , m_shape(std::move(shape))
    , m_owned(std::make_shared<std::vector<std::byte>>(byteSize())) {
    m_data = m_owned->data();
}

Tensor::Tensor(DType dtype, Shape shape, const std::byte* data, std::shared_ptr<const void> keepAlive)
    : m_dtype(dtype)
    , m_shape(std::move(shape))
    , m_data(data)
    , m_keepAlive(std::move(keepAlive)) {}

Tensor Tensor::fromFloats(Shape shape, std::span<const float> values) {
    Tensor t(DType::F32, std::move(shape));
    if (static_cast<std::int64_t>(values.size()) != t.elementCount())
        throw std::invalid_argument("Tensor::fromFloats: value count does not match the shape");
    if (!values.empty()) std::memcpy(t.mutableData(), values.data(), values.size_bytes());
    return t;
}

std::size_t Tensor::byteSize() const {
    return static_cast<std::size_t>(ql::elementCount(m_shape)) *
           static_cast<std::size_t>(storageBytes(m_dtype));
}

std::byte* Tensor::mutableData() {
    if (!m_owned) throw std::logic_error("Tensor::mutableData on a borrowed tensor");
    return m_owned->data();
}

namespace {

template <typename T> void convert(const std::byte* src, std::int64_t count, float* out) {
    for (std::int64_t i = 0; i < count; ++i) {
        T v;
        std::memcpy(&v, src + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
        out[i] = static_cast<float>(v);
    }
}

template <typename Decode>
void convert16(const std::byte* src, std::int64_t count, float* out, Decode decode) {
    for (std::int64_t i = 0; i < count; ++i) {
        std::uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        out[i] = decode(v);
    }
}

} // namespace

void Tensor::toFloat(std::int64_t begin, std::int64_t count, float* out) const {
    const std::byte* src = m_data + begin * storageBytes(m_dtype);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(src);
    switch (m_dtype) {
    case DType::F64:
        return convert<double>(src, count, out);
    case DType::F32:
        if (count) std::memcpy(out, src, static_cast<std::size_t>(count) * 4);
        return;
    case DType::F16:
        return convert16(src, count, out, halfToFloat);
    case DType::BF16:
        return convert16(src, count, out, bf16ToFloat);
    case DType::I8:
        return convert<std::int8_t>(src, count, out);
    case DType::U8:
    case DType::Bool:
        return convert<std::uint8_t>(src, count, out);
    case DType::I16:
        return convert<std::int16_t>(src, count, out);
    case DType::I32:
        return convert<std::int32_t>(src, count, out);
    case DType::I64:
        return convert<std::int64_t>(src, count, out);
    case DType::F8E4M3:
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = decodeMiniFloat(bytes[i], MiniFloat::E4M3FN);
        return;
    case DType::F8E5M2:
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = decodeMiniFloat(bytes[i], MiniFloat::E5M2);
        return;
    case DType::F4E2M1:
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = decodeMiniFloat(bytes[i], MiniFloat::E2M1);
        return;
    case DType::I4:
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = static_cast<float>(static_cast<std::int8_t>(bytes[i]));
        return;
    case DType::U4:
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = static_cast<float>(bytes[i]);
        return;
    case DType::E8M0:
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = decodeE8M0(bytes[i]);
        return;
    }
}

std::vector<float> Tensor::toFloatVector() const {
    std::vector<float> out(static_cast<std::size_t>(elementCount()));
    toFloat(0, elementCount(), out.data());
    return out;
}

} // namespace ql
