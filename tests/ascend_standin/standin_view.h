#pragma once
// Element access through an aclTensor's view (element strides and offset), the way a kernel
// walks it: a caller passing byte strides or a wrong offset reads the wrong elements.
#include "standin_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace qlstandin {

struct View {
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> strides;
    std::int64_t offset = 0;
    int dtype = -1;
    void* data = nullptr;
    std::size_t storage = 0; // bytes the storage dims cover

    explicit View(const aclTensor* t)
        : dims(t->dims)
        , strides(t->strides)
        , offset(t->offset)
        , dtype(t->dtype)
        , data(t->data)
        , storage(storageBytes(t->dtype, count(t->storage))) {}

    std::int64_t element(const std::vector<std::int64_t>& idx) const {
        std::int64_t e = offset;
        for (std::size_t d = 0; d < idx.size(); ++d)
            e += idx[d] * strides[d];
        return e;
    }
    float readFloat(std::int64_t e) const {
        float v;
        std::memcpy(&v, static_cast<const char*>(data) + 4 * e, 4);
        return v;
    }
    std::int64_t readInt(std::int64_t e) const {
        const auto* p = static_cast<const char*>(data);
        switch (dtype) {
        case DtInt8:
            return static_cast<std::int8_t>(p[e]);
        case DtUInt8:
            return static_cast<std::uint8_t>(p[e]);
        case DtInt32: {
            std::int32_t v;
            std::memcpy(&v, p + 4 * e, 4);
            return v;
        }
        default: {
            std::int64_t v;
            std::memcpy(&v, p + 8 * e, 8);
            return v;
        }
        }
    }
    // int8 / uint8 bytes, int32 words, int4 nibbles (even element in the low nibble, spec §6.2).
    void writeCode(std::int64_t e, std::int32_t code) const {
        auto* p = static_cast<unsigned char*>(data);
        switch (dtype) {
        case DtInt4: {
            const int shift = static_cast<int>(e % 2) * 4;
            p[e / 2] = static_cast<unsigned char>((p[e / 2] & ~(0xF << shift)) | ((code & 0xF) << shift));
            break;
        }
        case DtInt32:
            std::memcpy(p + 4 * e, &code, 4);
            break;
        default:
            p[e] = static_cast<unsigned char>(code);
        }
    }
};

/// Calls fn(idx) for every index of `dims` in row-major order.
template <typename Fn> void forEachIndex(const std::vector<std::int64_t>& dims, Fn&& fn) {
    if (count(dims) == 0) return;
    std::vector<std::int64_t> idx(dims.size(), 0);
    for (;;) {
        fn(idx);
        int d = static_cast<int>(dims.size()) - 1;
        for (; d >= 0; --d) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

/// fp32 -> int32 as CAST_RINT / CAST_FLOOR / ... do it: saturating, NaN to 0 (spec §3.1 golden).
inline std::int32_t castToInt32(float t, const std::string& mode) {
    double r;
    if (mode == "floor")
        r = std::floor(static_cast<double>(t));
    else if (mode == "ceil")
        r = std::ceil(static_cast<double>(t));
    else if (mode == "trunc")
        r = std::trunc(static_cast<double>(t));
    else
        r = std::rint(static_cast<double>(t)); // "round": half to even in the default FP mode
    if (std::isnan(r)) return 0;
    if (r >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
    if (r <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(r);
}

inline std::int32_t saturate(std::int32_t v, std::int32_t lo, std::int32_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

} // namespace qlstandin
