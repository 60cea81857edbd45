#pragma once
// Host <-> device copies of large tensors through two pinned chunks: while the DMA engine moves
// one chunk, the CPU fills (or drains) the other, so a pageable tensor crosses PCIe at pinned speed
// without pinning the caller's memory (which may be a read-only file mapping). Small transfers
// go straight from pageable memory, where setting up the chunks would cost more than it saves.
#include "cuda/cuda_guards.h"

#include <cstddef>

namespace ql::cuda {

class StagedCopier {
public:
    static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
    /// Large enough that chunked pinned copies pay off (the chunks cost an allocation per run).
    static bool worthStaging(std::size_t bytes) { return bytes >= 4 * kChunkBytes; }

    /// Allocates the two pinned chunks and their events; `stream` must outlive the copier.
    explicit StagedCopier(cudaStream_t stream);
    /// Waits for copies still in flight (an error path may leave some) before the chunks are freed.
    ~StagedCopier() { cudaStreamSynchronize(m_stream); }
    StagedCopier(const StagedCopier&) = delete;
    StagedCopier& operator=(const StagedCopier&) = delete;

    /// Enqueues host -> device; returns when the last chunk is queued (the copies finish in stream order).
    void upload(void* device, const void* host, std::size_t bytes);
    /// Device -> host, in stream order after earlier work; returns when `host` holds every byte.
    void download(void* host, const void* device, std::size_t bytes);

private:
    cudaStream_t m_stream;
    PinnedBuffer m_chunk[2];
    Event m_done[2]; // the last copy that used each chunk
};

/// Host -> device on `stream`: staged when a copier is given, else a plain cudaMemcpyAsync.
void copyToDevice(void* device, const void* host, std::size_t bytes, cudaStream_t stream,
                  StagedCopier* staging);
/// Device -> host on `stream`; the bytes are in `host` when it returns.
void copyToHost(void* host, const void* device, std::size_t bytes, cudaStream_t stream,
                StagedCopier* staging);

} // namespace ql::cuda
