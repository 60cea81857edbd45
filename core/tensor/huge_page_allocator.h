#pragma once
// An allocator for large per-tensor tables (a row of statistics per NVFP4 block is as large as the
// tensor): from 8 MiB up, the memory is mapped directly and the kernel asked for huge pages, so
// filling it costs a fault per 2 MiB instead of one per 4 KiB. Smaller requests use operator new.
#include <cstddef>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ql {

template <typename T> struct HugePageAllocator {
    using value_type = T;
    static constexpr std::size_t kMapped = std::size_t{8} << 20;

    HugePageAllocator() = default;
    template <typename U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
#if defined(__linux__)
        if (bytes >= kMapped) {
            void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            ::madvise(p, bytes, MADV_HUGEPAGE); // a hint: without it the pages are simply small
            return static_cast<T*>(p);
        }
#endif
        return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
    }
    void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__)
        if (n * sizeof(T) >= kMapped) {
            ::munmap(p, n * sizeof(T));
            return;
        }
#endif
        ::operator delete (p, std::align_val_t{alignof(T)});
    }
    template <typename U> bool operator==(const HugePageAllocator<U>&) const noexcept {
        return true;
    }
};

} // namespace ql
