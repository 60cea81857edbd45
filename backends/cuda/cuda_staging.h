#pragma once
// Host <-> device copies of large tensors through pinned chunks, by several host threads at once:
// each worker owns two pinned chunks and takes every workers-th chunk of the tensor, so while the
// DMA engine moves one chunk the workers fill (or drain) the others. A pageable tensor (a read-only
// file mapping, a fresh code buffer whose pages fault in as they are written) then crosses PCIe
// at the link's speed without being pinned. Small transfers go straight from pageable memory,
// where the chunks would cost more than they save. The chunks are allocated once and kept.
#include "cuda/cuda_guards.h"

#include <cstddef>
#include <functional>
#include <vector>

namespace ql::cuda {

class Staging {
public:
    static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
    /// Large enough that chunked pinned copies pay off.
    static bool worthStaging(std::size_t bytes) { return bytes >= 4 * kChunkBytes; }
    /// Copy workers for this machine: half the hardware threads, 1 to 8 (one thread's memcpy from a
    /// file mapping moves a fraction of what the link takes).
    static unsigned defaultWorkers();

    /// `stream` must outlive the staging; the workers make `device` current before they copy.
    Staging(int device, cudaStream_t stream, unsigned workers);
    /// Waits for copies still in flight (an error path may leave some) before the chunks are freed.
    ~Staging();
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;

    unsigned workers() const { return static_cast<unsigned>(m_slots.size()); }

    /// Enqueues host -> device on the stream while `alongside` (may be empty) runs on the calling
    /// thread; returns when both are done: every chunk is queued (they land in stream order) and
    /// `alongside` has returned. `landed` is recorded right after the last chunk is queued, so it
    /// completes when the copy does, however long `alongside` takes. The first error is rethrown
    /// (`alongside`'s, then the workers' in order) once every thread has finished.
    /// `workers` (1 to workers()) copy; the rest of the machine is left to `alongside`.
    void upload(void* device, const void* host, std::size_t bytes, unsigned workers,
                const std::function<void()>& alongside, const Event& landed);
    /// Device -> host, in stream order after earlier work; returns when `host` holds every byte.
    void download(void* host, const void* device, std::size_t bytes);

private:
    struct Slots {
        PinnedBuffer chunk[2];
        Event done[2]; // the last copy that used each chunk
        Slots();
    };
    /// Runs body(worker) on `workers` threads, `alongside` on this one; joins, then rethrows.
    void onWorkers(unsigned workers, const std::function<void(unsigned)>& body,
                   const std::function<void()>& alongside);

    int m_device;
    cudaStream_t m_stream;
    std::vector<Slots> m_slots;
};

} // namespace ql::cuda
