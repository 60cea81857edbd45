#pragma once
// A tensor's elements as the fast paths read them: f32, bf16 or f16 bytes in place (a memory-mapped
// file or a caller's buffer), widened to f32 as they are read: at most a block at a time into a small
// staging buffer, never a copy of the tensor.
#include "tensor/float_formats.h"
#include "tensor/tensor.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace ql {

struct ValuesView {
    const std::byte* data = nullptr;
    DType dtype = DType::F32; // F32, BF16 or F16
    std::int64_t count = 0;

    static ValuesView of(std::span<const float> values) {
        return {reinterpret_cast<const std::byte*>(values.data()), DType::F32,
                static_cast<std::int64_t>(values.size())};
    }
    /// The tensor's bytes in place when its dtype is one of the three; nullopt otherwise.
    static std::optional<ValuesView> of(const Tensor& t) {
        if (!readsInPlace(t.dtype())) return std::nullopt;
        return ValuesView{t.data(), t.dtype(), t.elementCount()};
    }
    static bool readsInPlace(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }

    std::size_t width() const { return dtype == DType::F32 ? 4 : 2; }
    /// Element i as f32 (memcpy: a mapped file may place a tensor at any offset).
    float at(std::int64_t i) const {
        const std::byte* p = data + static_cast<std::size_t>(i) * width();
        if (dtype == DType::F32) {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        return dtype == DType::BF16 ? bf16ToFloat(h) : halfToFloat(h);
    }
};

/// Reads a view's elements with the dtype decided once: fn(load) where load(i) returns element i.
template <typename Fn> decltype(auto) withLoader(const ValuesView& v, Fn&& fn) {
    switch (v.dtype) {
    case DType::BF16:
        return fn([p = v.data](std::int64_t i) {
            std::uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            return bf16ToFloat(h);
        });
    case DType::F16:
        return fn([p = v.data](std::int64_t i) {
            std::uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            return halfToFloat(h);
        });
    default:
        return fn([p = v.data](std::int64_t i) {
            float f;
            std::memcpy(&f, p + 4 * i, 4);
            return f;
        });
    }
}

/// Elements begin .. begin + n - 1 into out as f32, eight at a time (each eight one or two vector
/// moves, inline: a call to memcpy costs more than a short block).
template <typename Load> inline void stageValues(const Load& load, std::int64_t begin, int n, float* out) {
    int k = 0;
    for (; k + 8 <= n; k += 8)
        for (int l = 0; l < 8; ++l)
            out[k + l] = load(begin + k + l);
    for (; k < n; ++k)
        out[k] = load(begin + k);
}

} // namespace ql
