#include "cuda/cuda_staging.h"

#include "base/workers.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace ql::cuda {
namespace {

// The chunks of a `bytes`-long copy that worker `w` of `workers` takes: w, w + workers, ...
struct ChunkSeries {
    std::size_t bytes;
    unsigned w, workers;

    std::size_t count() const {
        const std::size_t chunks = (bytes + Staging::kChunkBytes - 1) / Staging::kChunkBytes;
        return chunks > w ? (chunks - w + workers - 1) / workers : 0;
    }
    std::size_t offset(std::size_t j) const { return (w + j * workers) * Staging::kChunkBytes; }
    std::size_t length(std::size_t j) const { return std::min(Staging::kChunkBytes, bytes - offset(j)); }
};

} // namespace

unsigned Staging::defaultWorkers() {
    return std::clamp(std::thread::hardware_concurrency() / 2, 1u, 8u);
}

Staging::Slots::Slots()
    : chunk{PinnedBuffer(kChunkBytes), PinnedBuffer(kChunkBytes)} {}

Staging::Staging(int device, cudaStream_t stream, unsigned workers)
    : m_device(device)
    , m_stream(stream)
    , m_slots(std::max(workers, 1u)) {}

Staging::~Staging() {
    cudaStreamSynchronize(m_stream);
}

void Staging::onWorkers(unsigned workers, const std::function<void(unsigned)>& body,
                        const std::function<void()>& alongside) {
    runOnWorkers(workers + 1, [&](unsigned w) { // worker 0 is the calling thread
        if (w == 0) {
            if (alongside) alongside();
            return;
        }
        check(cudaSetDevice(m_device), "cudaSetDevice(" + std::to_string(m_device) + ")");
        body(w - 1);
    });
}

void Staging::upload(void* device, const void* host, std::size_t bytes, unsigned workers,
                     const std::function<void()>& alongside, const Event& landed) {
    auto* dst = static_cast<char*>(device);
    const auto* src = static_cast<const char*>(host);
    workers = std::clamp(workers, 1u, this->workers());
    std::atomic<unsigned> queuing{workers};
    onWorkers(
        workers,
        [&](unsigned w) {
            Slots& s = m_slots[w];
            const ChunkSeries mine{bytes, w, workers};
            for (std::size_t j = 0; j < mine.count(); ++j) {
                const std::size_t at = mine.offset(j), n = mine.length(j), slot = j % 2;
                if (j >= 2) s.done[slot].synchronize(); // the chunk's previous copy has left it
                std::memcpy(s.chunk[slot].get(), src + at, n);
                check(cudaMemcpyAsync(dst + at, s.chunk[slot].get(), n, cudaMemcpyHostToDevice, m_stream),
                      "cudaMemcpyAsync(host to device, " + std::to_string(n) + " bytes)");
                s.done[slot].record(m_stream);
            }
            if (--queuing == 0) landed.record(m_stream); // the last worker's last chunk is queued
        },
        alongside);
}

void Staging::download(void* host, const void* device, std::size_t bytes) {
    auto* dst = static_cast<char*>(host);
    const auto* src = static_cast<const char*>(device);
    onWorkers(workers(),
              [&](unsigned w) {
                  Slots& s = m_slots[w];
                  const ChunkSeries mine{bytes, w, workers()};
                  auto enqueue = [&](std::size_t j) {
                      const std::size_t n = mine.length(j);
                      check(cudaMemcpyAsync(s.chunk[j % 2].get(), src + mine.offset(j), n,
                                            cudaMemcpyDeviceToHost, m_stream),
                            "cudaMemcpyAsync(device to host, " + std::to_string(n) + " bytes)");
                      s.done[j % 2].record(m_stream);
                  };
                  for (std::size_t j = 0; j < std::min<std::size_t>(mine.count(), 2); ++j)
                      enqueue(j);
                  for (std::size_t j = 0; j < mine.count(); ++j) {
                      s.done[j % 2].synchronize();
                      std::memcpy(dst + mine.offset(j), s.chunk[j % 2].get(), mine.length(j));
                      if (j + 2 < mine.count()) enqueue(j + 2); // the chunk is free: fetch the one after next
                  }
              },
              {});
}

} // namespace ql::cuda
