#include "base/mapped_memory.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ql::mapped {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

struct Block {
    void* p;
    std::size_t bytes;
};

// Every block handed out (its mapped size, for giveBack) and the blocks kept, under one lock:
// requests are a few per tensor.
struct Pool {
    Pool() { kept.reserve(kKept + 1); } // so keeping a block never allocates
    std::mutex lock;
    std::unordered_map<void*, std::size_t> out;
    std::vector<Block> kept;
};

Pool& pool() {
    static Pool* p = new Pool; // never destroyed: a block may be given back during static teardown
    return *p;
}

void* mapFresh(std::size_t bytes) {
#if defined(__linux__)
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    adviseHugePages(p, bytes); // a hint: without it the pages are simply small
    return p;
#else
    return ::operator new (bytes, std::align_val_t{kHugePage});
#endif
}

void unmap(const Block& b) noexcept {
#if defined(__linux__)
    ::munmap(b.p, b.bytes);
#else
    ::operator delete (b.p, std::align_val_t{kHugePage});
#endif
}

} // namespace

void adviseHugePages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__)
    const auto first = reinterpret_cast<std::uintptr_t>(p);
    if (first > static_cast<std::uintptr_t>(-1) - bytes) return;
    const std::size_t skip = (kHugePage - first % kHugePage) % kHugePage; // to the first whole huge page
    if (bytes < skip + kHugePage) return;
    const std::size_t whole = (bytes - skip) / kHugePage * kHugePage;
    ::madvise(static_cast<char*>(p) + skip, whole, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

namespace {

std::size_t mappedSize(std::size_t bytes) {
    if (bytes > static_cast<std::size_t>(-1) - kHugePage) throw std::bad_alloc();
    return (std::max<std::size_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage;
}

void* handOut(Pool& pool, Block b) {
    pool.out.emplace(b.p, b.bytes);
    return b.p;
}

// A kept block for `size` mapped bytes (the smallest that fits, if no more than twice that), handed
// out; or null.
void* takeKept(std::size_t size) {
    Pool& p = pool();
    const std::lock_guard hold(p.lock);
    auto best = p.kept.end();
    for (auto it = p.kept.begin(); it != p.kept.end(); ++it)
        if (it->bytes >= size && it->bytes / 2 <= size && (best == p.kept.end() || it->bytes < best->bytes))
            best = it;
    if (best == p.kept.end()) return nullptr;
    const Block b = *best;
    p.kept.erase(best);
    try {
        return handOut(p, b);
    } catch (...) {
        p.kept.push_back(b);
        throw;
    }
}

void* takeFresh(std::size_t size) {
    void* q = mapFresh(size);
    Pool& p = pool();
    const std::lock_guard hold(p.lock);
    try {
        return handOut(p, {q, size});
    } catch (...) {
        unmap({q, size});
        throw;
    }
}

} // namespace

void* take(std::size_t bytes) {
    const std::size_t size = mappedSize(bytes);
    if (void* q = takeKept(size)) return q;
    return takeFresh(size);
}

void* takeZeroed(std::size_t bytes) {
    const std::size_t size = mappedSize(bytes);
    if (void* q = takeKept(size)) {
        std::memset(q, 0, bytes);
        return q;
    }
    return takeFresh(size);
}

void giveBack(void* q) noexcept {
    if (!q) return;
    Pool& p = pool();
    std::array<Block, kKept + 1> released{}; // at most every kept block and the one given: no allocation
    std::size_t count = 0;
    {
        const std::lock_guard hold(p.lock);
        const auto it = p.out.find(q);
        if (it == p.out.end()) return; // not ours: nothing to give back
        const Block given{q, it->second};
        p.out.erase(it);
        if (given.bytes > kKeptBytes) {
            released[count++] = given;
        } else {
            p.kept.push_back(given);
            std::size_t kept = 0;
            for (const Block& b : p.kept)
                kept += b.bytes;
            // The smallest go first: the largest serve every request.
            while (p.kept.size() > kKept || kept > kKeptBytes) {
                const auto smallest =
                    std::min_element(p.kept.begin(), p.kept.end(),
                                     [](const Block& x, const Block& y) { return x.bytes < y.bytes; });
                kept -= smallest->bytes;
                released[count++] = *smallest;
                p.kept.erase(smallest);
            }
        }
    }
    for (std::size_t i = 0; i < count; ++i) // outside the lock: munmap can take a while
        unmap(released[i]);
}

Scratch::Scratch(std::size_t bytes, Contents contents)
    : m_pooled(bytes >= kPooledFrom)
    , m_data(!m_pooled                      ? ::operator new(bytes)
             : contents == Contents::Zeroed ? takeZeroed(bytes)
                                            : take(bytes)) {
    if (!m_pooled && contents == Contents::Zeroed) std::memset(m_data, 0, bytes);
}

Scratch::~Scratch() {
    if (m_pooled)
        giveBack(m_data);
    else
        ::operator delete(m_data);
}

std::size_t keptCount() {
    Pool& p = pool();
    const std::lock_guard hold(p.lock);
    return p.kept.size();
}

std::size_t keptBytes() {
    Pool& p = pool();
    const std::lock_guard hold(p.lock);
    std::size_t total = 0;
    for (const Block& b : p.kept)
        total += b.bytes;
    return total;
}

void releaseKept() noexcept {
    std::vector<Block> kept;
    {
        Pool& p = pool();
        const std::lock_guard hold(p.lock);
        kept.swap(p.kept);
    }
    for (const Block& b : kept)
        unmap(b);
}

} // namespace ql::mapped
