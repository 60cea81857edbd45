#pragma once
// An allocator for large per-tensor tables (a tensor's codes; a row of statistics per NVFP4 block is
// as large as the tensor): from 8 MiB up, the memory is mapped in huge pages (a fault per 2 MiB
// instead of one per 4 KiB) and kept for reuse when given back (base/mapped_memory.h), so the next
// tensor of a model run, or the app's next run, does not fault it in again. Smaller requests use
// operator new.
#include "base/mapped_memory.h"

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace ql {

template <typename T> struct HugePageAllocator {
    using value_type = T;
    static constexpr std::size_t kMapped = std::size_t{8} << 20;

    HugePageAllocator() = default;
    template <typename U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) { return static_cast<T*>(allocateBytes(n, false)); }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) >= kMapped) return mapped::giveBack(p);
        ::operator delete (p, std::align_val_t{alignof(T)});
    }
    template <typename U> bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }

protected:
    // n values' memory; `zeroed`: all zero bytes (a fresh mapping, or cleared).
    static void* allocateBytes(std::size_t n, bool zeroed) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kMapped) return zeroed ? mapped::takeZeroed(bytes) : mapped::take(bytes);
        void* p = ::operator new (bytes, std::align_val_t{alignof(T)});
        if (zeroed) std::memset(p, 0, bytes);
        return p;
    }
};

/// A HugePageAllocator whose memory starts zeroed, for row tables of a type whose value-initialised
/// state is all zero bytes: vector(n) then writes nothing more. A fresh mapping comes zeroed, and its
/// pages are first touched (and cleared by the kernel) by the threads that fill them; a kept block,
/// or a smaller one, is cleared with memset when taken, on the calling thread, which costs less than
/// faulting fresh pages in. Only value-initialisation is skipped, and only into memory allocate()
/// just returned: vector(n) or growth into a new block (a container that shrinks keeps its size;
/// ClippingStats shrinks with shrink_to_fit and never grows again).
template <typename T> struct ZeroedHugePageAllocator : HugePageAllocator<T> {
    template <typename U> struct rebind { using other = ZeroedHugePageAllocator<U>; };
    ZeroedHugePageAllocator() = default;
    template <typename U> ZeroedHugePageAllocator(const ZeroedHugePageAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) { return static_cast<T*>(HugePageAllocator<T>::allocateBytes(n, true)); }
    template <typename U> void construct(U* p) {
        if constexpr (!zeroBytesAreValueInitialised<U>()) ::new (static_cast<void*>(p)) U();
    }
    template <typename U, typename... Args> void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }

private:
    template <typename U> static constexpr bool zeroBytesAreValueInitialised() {
        if constexpr (!std::is_trivially_copyable_v<U>) {
            return false;
        } else {
            const auto bytes = std::bit_cast<std::array<unsigned char, sizeof(U)>>(U{});
            for (unsigned char b : bytes)
                if (b != 0) return false;
            return true;
        }
    }
};

} // namespace ql
