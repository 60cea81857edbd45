#pragma once
// Marks arithmetic that the CUDA backend's kernels run as well as the host (nvcc compiles it for
// both sides; every other compiler sees plain inline functions), so one definition serves the
// scalar oracle, the CPU passes and the device.
#if defined(__CUDACC__)
#define QL_HOST_DEVICE __host__ __device__
#define QL_FORCE_INLINE __forceinline__
#else
#define QL_HOST_DEVICE
#define QL_FORCE_INLINE __attribute__((always_inline)) inline
#endif
