#pragma once
// What the cuda backend keeps from one job to the next: the stream, the device buffers (grown to
// the largest job so far, never shrunk) and the pinned staging chunks. A `quantize --all` over
// hundreds of tensors allocates once; everything is released when the backend is destroyed. A
// failed CUDA call may leave the device in an error state, so the backend drops its context after
// any error and the next job starts a fresh one.
#include "cuda/cuda_guards.h"
#include "cuda/cuda_staging.h"

#include <array>
#include <cstddef>
#include <memory>

namespace ql::cuda {

/// The buffers a job uses, one each.
enum class BufferRole {
    Input,
    Codes,
    Scales,
    ZeroPoints,
    RowBase,
    ColumnTable,
    RangeLow,
    RangeHigh,
    StatisticsBlocks, // the statistics passes (cuda_device_statistics.cpp)
    StatisticsCodes,
    StatisticsRows,
    StatisticsSlots,
    StatisticsEdges,
    Count
};

class DeviceContext {
public:
    /// Makes `device` current on the calling thread and creates the stream.
    explicit DeviceContext(int device);
    ~DeviceContext();
    DeviceContext(const DeviceContext&) = delete;
    DeviceContext& operator=(const DeviceContext&) = delete;

    int device() const { return m_device; }
    cudaStream_t stream() const { return m_stream.get(); }
    /// At least `bytes` of device memory for `role` (null for 0); the contents are not kept when
    /// it grows. Valid until the next call for the same role.
    void* buffer(BufferRole role, std::size_t bytes);
    /// The pinned chunks and their copy workers, created on first use.
    Staging& staging();
    /// Device bytes held now, for tests.
    std::size_t heldBytes() const;

private:
    int m_device;
    Stream m_stream;
    std::array<DeviceBuffer, static_cast<std::size_t>(BufferRole::Count)> m_buffers;
    std::unique_ptr<Staging> m_staging;
};

} // namespace ql::cuda
