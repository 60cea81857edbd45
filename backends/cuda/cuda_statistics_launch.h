#pragma once
// The statistics kernels' launches (cuda_statistics.cu): the boundary between the host's
// orchestration (cuda_device_statistics.cpp) and nvcc, as cuda_kernels.h is for the quantize kernel.
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_statistics.h"

#include <cuda_runtime_api.h>

namespace ql::cuda {

/// Pass two counts in shared memory: at most this many counters (bins plus three per histogram).
constexpr int kMaxHistogramSlots = 8192;

struct FirstPassLaunch {
    const void* input; // InputKind elements
    InputKind kind;
    StatisticsArgs args;      // configureLaunch() is applied by the launch
    unsigned blocks;          // firstPassBlocks(count)
    BlockSums* blocksOut;     // one per block
    std::int64_t* codeCounts; // 256, zeroed by the caller
    GroupClipping* rows;      // args.rows of them, zeroed by the caller
};

struct SecondPassLaunch {
    const void* input;
    InputKind kind;
    StatisticsArgs args;
    HistogramSlots counters;
    std::int64_t* slotCounts; // counters.total(), zeroed by the caller
};

/// The first pass's grid for `count` elements: one resident wave (0 when the device query fails).
unsigned firstPassBlocks(std::int64_t count);
/// Enqueue the passes on `stream`; each returns the launch's error, not the kernel's.
cudaError_t launchFirstPass(const FirstPassLaunch& launch, cudaStream_t stream);
cudaError_t launchSecondPass(const SecondPassLaunch& launch, cudaStream_t stream);

} // namespace ql::cuda
