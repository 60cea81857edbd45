#pragma once
// RAII owners for every CUDA resource a run takes, so that each error path (a failed call, a
// cancel, an exception from QuantLens itself) releases what was acquired, in reverse order.
// Every call is checked: a failure becomes QuantError("cuda: <call> failed: <reason>").
#include "base/error.h"

#include <cstddef>
#include <cuda_runtime_api.h>
#include <string>
#include <utility>

namespace ql::cuda {

[[noreturn]] inline void throwCudaError(const std::string& call, cudaError_t e) {
    throw QuantError("cuda: " + call + " failed: " + cudaGetErrorString(e));
}

inline void check(cudaError_t e, const std::string& call) {
    if (e != cudaSuccess) throwCudaError(call, e);
}

/// Device memory from cudaMalloc (256-byte aligned: the kernels' 16-byte vector loads rely on it).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes)
        : m_bytes(bytes) {
        if (bytes) check(cudaMalloc(&m_ptr, bytes), "cudaMalloc(" + std::to_string(bytes) + " bytes)");
    }
    ~DeviceBuffer() {
        if (m_ptr) cudaFree(m_ptr);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : m_ptr(std::exchange(o.m_ptr, nullptr))
        , m_bytes(o.m_bytes) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        std::swap(m_ptr, o.m_ptr);
        std::swap(m_bytes, o.m_bytes);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* get() const { return m_ptr; }
    template <class T> T* as() const { return static_cast<T*>(m_ptr); }
    std::size_t size() const { return m_bytes; }

private:
    void* m_ptr = nullptr;
    std::size_t m_bytes = 0;
};

/// Page-locked host memory (cudaHostAlloc), so copies from and to it run as DMA at full speed.
class PinnedBuffer {
public:
    explicit PinnedBuffer(std::size_t bytes) {
        check(cudaHostAlloc(&m_ptr, bytes, cudaHostAllocDefault),
              "cudaHostAlloc(" + std::to_string(bytes) + " bytes)");
    }
    ~PinnedBuffer() {
        if (m_ptr) cudaFreeHost(m_ptr);
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    void* get() const { return m_ptr; }

private:
    void* m_ptr = nullptr;
};

/// A non-blocking stream: never serialised with the legacy default stream of other code.
class Stream {
public:
    Stream() {
        check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    }
    ~Stream() {
        if (m_stream) cudaStreamDestroy(m_stream);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return m_stream; }
    void synchronize() const { check(cudaStreamSynchronize(m_stream), "cudaStreamSynchronize"); }

private:
    cudaStream_t m_stream = nullptr;
};

/// A timing event; `record` marks the point in the stream, `elapsedMs` reads two recorded marks.
class Event {
public:
    Event() { check(cudaEventCreate(&m_event), "cudaEventCreate"); }
    ~Event() {
        if (m_event) cudaEventDestroy(m_event);
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return m_event; }
    void record(cudaStream_t stream) const { check(cudaEventRecord(m_event, stream), "cudaEventRecord"); }
    void synchronize() const { check(cudaEventSynchronize(m_event), "cudaEventSynchronize"); }

private:
    cudaEvent_t m_event = nullptr;
};

/// Milliseconds between two recorded (and completed) events.
inline double elapsedMs(const Event& from, const Event& to) {
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, from.get(), to.get()), "cudaEventElapsedTime");
    return static_cast<double>(ms);
}

} // namespace ql::cuda
