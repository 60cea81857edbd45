#include "cuda/cuda_staging.h"

#include <algorithm>
#include <cstring>

namespace ql::cuda {

StagedCopier::StagedCopier(cudaStream_t stream)
    : m_stream(stream)
    , m_chunk{PinnedBuffer(kChunkBytes), PinnedBuffer(kChunkBytes)} {}

void StagedCopier::upload(void* device, const void* host, std::size_t bytes) {
    auto* dst = static_cast<char*>(device);
    const auto* src = static_cast<const char*>(host);
    for (std::size_t offset = 0, i = 0; offset < bytes; offset += kChunkBytes, ++i) {
        const std::size_t n = std::min(kChunkBytes, bytes - offset);
        const int slot = static_cast<int>(i % 2);
        if (i >= 2) m_done[slot].synchronize(); // the chunk's previous copy has left it
        std::memcpy(m_chunk[slot].get(), src + offset, n);
        check(cudaMemcpyAsync(dst + offset, m_chunk[slot].get(), n, cudaMemcpyHostToDevice, m_stream),
              "cudaMemcpyAsync(host to device, " + std::to_string(n) + " bytes)");
        m_done[slot].record(m_stream);
    }
}

void StagedCopier::download(void* host, const void* device, std::size_t bytes) {
    auto* dst = static_cast<char*>(host);
    const auto* src = static_cast<const char*>(device);
    const std::size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
    auto enqueue = [&](std::size_t i) {
        const std::size_t offset = i * kChunkBytes, n = std::min(kChunkBytes, bytes - offset);
        check(cudaMemcpyAsync(m_chunk[i % 2].get(), src + offset, n, cudaMemcpyDeviceToHost, m_stream),
              "cudaMemcpyAsync(device to host, " + std::to_string(n) + " bytes)");
        m_done[i % 2].record(m_stream);
    };
    for (std::size_t i = 0; i < std::min<std::size_t>(chunks, 2); ++i)
        enqueue(i);
    for (std::size_t i = 0; i < chunks; ++i) {
        const std::size_t offset = i * kChunkBytes, n = std::min(kChunkBytes, bytes - offset);
        m_done[i % 2].synchronize();
        std::memcpy(dst + offset, m_chunk[i % 2].get(), n);
        if (i + 2 < chunks) enqueue(i + 2); // the chunk is free again: fetch the one after next into it
    }
}

void copyToDevice(void* device, const void* host, std::size_t bytes, cudaStream_t stream,
                  StagedCopier* staging) {
    if (bytes == 0) return;
    if (staging) return staging->upload(device, host, bytes);
    check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync(host to device, " + std::to_string(bytes) + " bytes)");
}

void copyToHost(void* host, const void* device, std::size_t bytes, cudaStream_t stream,
                StagedCopier* staging) {
    if (bytes == 0) return;
    if (staging) return staging->download(host, device, bytes);
    check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync(device to host, " + std::to_string(bytes) + " bytes)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

} // namespace ql::cuda
