#pragma once
// The one boundary between host code (g++) and the kernels (nvcc, cuda_kernels.cu).
#include "cuda/cuda_range.h"
#include "cuda/cuda_walk.h"

#include <cuda_runtime_api.h>

namespace ql::cuda {

/// How the input sits in device memory: f32, or bf16 / f16 bits widened in the kernel.
enum class InputKind : std::uint8_t { F32, Bf16, F16 };

inline int bytesOf(InputKind k) {
    return k == InputKind::F32 ? 4 : 2;
}

struct KernelLaunch {
    const void* input; // InputKind elements, cudaMalloc-aligned
    void* codes;       // 1 byte per code, or 4 for int32 codes (as ql::Codes)
    InputKind kind;
    bool wideCodes;    // int32 codes
    QuantizeArgs args; // configureLaunch() is applied by the launch
};

/// Enqueues the quantize kernel on `stream` with a grid that fills the device once (the kernel
/// strides over the rest). Returns the launch's error (cudaGetLastError), not the kernel's.
cudaError_t launchQuantize(KernelLaunch launch, cudaStream_t stream);

/// The range kernel's launch: every group's range key pair, lo[g] / hi[g] zeroed by the caller.
struct RangeLaunch {
    const void* input; // InputKind elements, cudaMalloc-aligned
    InputKind kind;
    std::int32_t* lo;
    std::int32_t* hi;
    QuantizeArgs args; // map and count; configureLaunch() is applied by the launch
};

/// Enqueues the range kernel on `stream` (layouts whose vectors share a scale only: see
/// rangeStrided). Returns the launch's error, not the kernel's.
cudaError_t launchRange(RangeLaunch launch, cudaStream_t stream);

/// cudaSuccess when this build has a kernel image the current device can run; otherwise why not
/// (cudaErrorNoKernelImageForDevice for a GPU older than the architectures built).
cudaError_t kernelImageStatus();

} // namespace ql::cuda
