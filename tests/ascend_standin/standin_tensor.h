#pragma once
// What an aclTensor / aclOpExecutor is inside the stand-in: plain descriptors that the op library
// can check against the device allocations.
#include "standin_abi.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct aclTensor {
    static constexpr std::uint32_t kMagic = 0x7e5a0001;
    std::uint32_t magic = kMagic;
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> strides; // elements
    std::int64_t offset = 0;           // elements
    int dtype = -1;
    int format = -1;
    std::vector<std::int64_t> storage;
    void* data = nullptr;
};

struct aclOpExecutor {
    static constexpr std::uint32_t kMagic = 0x7e5a0002;
    std::uint32_t magic = kMagic;
    std::string op;
    std::uint64_t workspaceSize = 0;
    std::function<int()> work; // runs at aclrtSynchronizeStream
};

namespace qlstandin {

/// Bytes that `count` elements of `dtype` occupy (int4: two per byte), 0 for an unknown dtype.
inline std::size_t storageBytes(int dtype, std::int64_t count) {
    const auto n = static_cast<std::size_t>(count);
    switch (dtype) {
    case DtInt8:
    case DtUInt8:
        return n;
    case DtFloat16:
        return 2 * n;
    case DtFloat:
    case DtInt32:
        return 4 * n;
    case DtInt64:
        return 8 * n;
    case DtInt4:
        return (n + 1) / 2;
    default:
        return 0;
    }
}

inline std::int64_t count(const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (auto d : dims)
        n *= d;
    return n;
}

} // namespace qlstandin
