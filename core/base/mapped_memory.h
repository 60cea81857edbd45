#pragma once
// Large blocks of anonymous memory, mapped in huge pages and kept for reuse (HugePageAllocator).
//
// A fresh mapping costs a page fault per 2 MiB at first touch, and the kernel clears each page then:
// about a tenth of a tensor job's time, paid again for every tensor of a model run and every re-run
// in the app. So a block given back is kept, up to kKept of them and kKeptBytes in all, and handed to
// the next request it fits (at most twice that request's size), the way PyTorch's caching allocator
// keeps device memory. What stays mapped is then a few blocks of the largest tensor's size, not the
// model's.
#include <cstddef>

namespace ql::mapped {

// Blocks kept for reuse; the smallest is released beyond that. A tensor's run takes several at once
// (its codes, its rows of statistics, each worker's pair table, its report's text).
constexpr std::size_t kKept = 8;
// Bytes kept at most, so an app left open after a large tensor's run does not hold it idle: a block
// larger than this is released when given back, and the smallest go while the kept exceed it.
constexpr std::size_t kKeptBytes = std::size_t{1} << 30;

/// At least `bytes` of memory, whose contents are unspecified (a kept block, or a fresh mapping).
/// Throws std::bad_alloc.
void* take(std::size_t bytes);
/// At least `bytes` of zeroed memory: a kept block cleared here (writing resident memory costs less
/// than faulting in fresh pages), or a fresh mapping, whose pages the kernel clears at first touch by
/// the threads that fill them. Throws std::bad_alloc.
void* takeZeroed(std::size_t bytes);
/// Gives back a block from take() or takeZeroed(): kept for reuse, or released.
void giveBack(void* p) noexcept;

/// Scratch memory one run fills and drops (a worker's count table, a report's text), given back when
/// it goes: from the pool when kPooledFrom bytes or more (fresh 4 KiB pages there cost a fault each
/// at first touch, and a kept block none), else from the heap.
class Scratch {
public:
    static constexpr std::size_t kPooledFrom = std::size_t{256} << 10;
    enum class Contents : bool { Any, Zeroed };
    /// Throws std::bad_alloc.
    explicit Scratch(std::size_t bytes, Contents contents = Contents::Any);
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    void* data() const { return m_data; }

private:
    bool m_pooled;
    void* m_data;
};

/// Asks for huge pages under [p, p + bytes) where it covers whole 2 MiB pages: a plain vector of a
/// tensor's parameters (NVFP4's million scales) then costs a fault per 2 MiB at first touch, not one
/// per 4 KiB. A hint, before the memory is first written; nothing changes where it is not taken.
void adviseHugePages(void* p, std::size_t bytes) noexcept;

/// Blocks kept now, and their bytes (for tests).
std::size_t keptCount();
std::size_t keptBytes();
/// Releases every kept block.
void releaseKept() noexcept;

} // namespace ql::mapped
