#pragma once
// Scales and zero points as the operator takes them, and the codes it produces.
#include "base/huge_page_allocator.h"
#include "quant/target.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ql {

struct QuantParams {
    /// One per scale group, in the operator's own meaning: a step for divide / reciprocal
    /// conventions, an inverse step for multiply conventions. MX: 2^e; NVFP4: E4M3(S_b) * s_g.
    std::vector<float> scales;
    /// Empty when symmetric; one per scale group, or a single value (npu_group_quant offset).
    std::vector<float> zeroPoints;
    /// MX: E8M0 codes; NVFP4: E4M3 block-scale codes. Empty otherwise.
    std::vector<std::uint8_t> scaleCodes;
    /// NVFP4 fp32 per-tensor scale s_g.
    float tensorScale = 0.0f;
    /// Set by calibration when its ranges are far worse than absmax on the same groups (most of a
    /// group clipped, or a method that had too few values to work with), in words for the user;
    /// empty otherwise. Reports and the UI show it beside the results.
    std::string calibrationNote = {};

    float zeroPointOf(std::int64_t group) const {
        if (zeroPoints.empty()) return 0.0f;
        return zeroPoints.size() == 1 ? zeroPoints[0] : zeroPoints[static_cast<std::size_t>(group)];
    }
};

/// An allocator whose value-less construct() leaves bytes uninitialised, so a code buffer that a
/// kernel overwrites whole is not zero-filled first (one write of every code saved). A tensor's
/// codes come from huge pages where they are large: 4 KiB faults cost as much as the kernel.
template <typename T> struct DefaultInitAllocator : HugePageAllocator<T> {
    template <typename U> struct rebind { using other = DefaultInitAllocator<U>; };
    DefaultInitAllocator() = default;
    template <typename U> DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
    template <typename U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
    template <typename U, typename... Args> void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

/// Unpacked codes, one per element: 1 byte for 8-bit and sub-byte targets, 4 bytes for int32.
/// Integer codes hold their value; floating targets hold the raw format bits.
class Codes {
public:
    /// For kernels that write every code: the buffer starts uninitialised.
    struct Uninitialized {};

    Codes() = default;
    /// Zero-filled codes.
    Codes(Target target, std::int64_t count)
        : m_target(target)
        , m_count(count)
        , m_bytes(static_cast<std::size_t>(count) * width(), 0) {}
    Codes(Target target, std::int64_t count, Uninitialized)
        : m_target(target)
        , m_count(count)
        , m_bytes(static_cast<std::size_t>(count) * width()) {}

    Target target() const { return m_target; }
    std::int64_t size() const { return m_count; }
    int width() const { return m_target == Target::Int32 ? 4 : 1; }
    const std::uint8_t* data() const { return m_bytes.data(); }
    std::uint8_t* data() { return m_bytes.data(); }

    std::int32_t at(std::int64_t i) const {
        const auto k = static_cast<std::size_t>(i);
        switch (m_target) {
        case Target::Int32: {
            std::int32_t v;
            std::memcpy(&v, m_bytes.data() + 4 * k, 4);
            return v;
        }
        case Target::Int8:
        case Target::Int4:
            return static_cast<std::int8_t>(m_bytes[k]);
        default:
            return m_bytes[k];
        }
    }
    void set(std::int64_t i, std::int32_t v) {
        const auto k = static_cast<std::size_t>(i);
        if (m_target == Target::Int32) {
            // The bound is the caller's contract; said here so that GCC does not assume a narrower
            // buffer on paths where the target is known to be 8-bit (-Wstringop-overflow).
            if (4 * k + 4 > m_bytes.size()) __builtin_unreachable();
            std::memcpy(m_bytes.data() + 4 * k, &v, 4);
        } else
            m_bytes[k] = static_cast<std::uint8_t>(v);
    }
    bool operator==(const Codes&) const = default;

private:
    Target m_target = Target::Int8;
    std::int64_t m_count = 0;
    std::vector<std::uint8_t, DefaultInitAllocator<std::uint8_t>> m_bytes;
};

} // namespace ql
