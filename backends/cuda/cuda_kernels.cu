// The quantize kernel: one instantiation per input type x code width x scale operation, all
// running the body in cuda_walk.h (the arithmetic is cuda_element.h). Built with -fmad=false and
// IEEE division, so each element is the oracle's sequence of IEEE operations.
#include "cuda/cuda_kernels.h"

namespace ql::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;

template <ScaleOp Op, class In, class Code>
__global__ void __launch_bounds__(kThreadsPerBlock)
    quantizeKernel(const In* __restrict__ x, Code* __restrict__ codes, QuantizeArgs args) {
    const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    quantizeStrided<Op>(x, codes, args, thread, threads);
}

// The range of every valid lane joins its group's: one pair of atomics per warp when the warp's
// vectors share a group (rows and blocks of 32 vectors and more), else one pair per lane. Empty
// ranges (key 0, the zeroed start) need no atomic.
struct WarpRanges {
    std::int32_t* lo;
    std::int32_t* hi;

    __device__ void single(std::int64_t g, std::int32_t l, std::int32_t h) const {
        if (l < 0) atomicMin(lo + g, l);
        if (h > 0) atomicMax(hi + g, h);
    }
    __device__ void operator()(bool valid, std::int64_t g, std::int32_t l, std::int32_t h) const {
        constexpr unsigned kAll = 0xFFFFFFFFu;
        const std::int64_t leader = __shfl_sync(kAll, g, 0); // lane 0 is valid in every iteration
        if (__all_sync(kAll, !valid || g == leader)) {
            l = __reduce_min_sync(kAll, l);
            h = __reduce_max_sync(kAll, h);
            if ((threadIdx.x & 31) == 0) single(leader, l, h);
        } else if (valid) {
            single(g, l, h);
        }
    }
};

template <class In>
__global__ void __launch_bounds__(kThreadsPerBlock)
    rangeKernel(const In* __restrict__ x, WarpRanges ranges, QuantizeArgs args) {
    const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    rangeStrided(x, args, thread, threads, static_cast<int>(threadIdx.x & 31), ranges,
                 [&](std::int64_t g, std::int32_t l, std::int32_t h) { ranges.single(g, l, h); });
}

// One resident wave of `kernel` over `count` elements in vectors of `width`: enough 16-byte loads
// in flight to saturate memory, no tail of late blocks. 0 blocks and the error when a query fails.
template <class Kernel>
cudaError_t residentBlocks(Kernel* kernel, std::int64_t count, int width, unsigned& blocks) {
    int device = 0, sms = 0, perSm = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess)
        return e;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreadsPerBlock, 0);
        e != cudaSuccess)
        return e;
    const std::int64_t vectors = count / width;
    const std::int64_t wanted = (vectors + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const std::int64_t resident = static_cast<std::int64_t>(sms) * (perSm > 0 ? perSm : 1);
    blocks = static_cast<unsigned>(wanted < 1 ? 1 : (wanted < resident ? wanted : resident));
    return cudaSuccess;
}

template <ScaleOp Op, class In, class Code>
cudaError_t launchTyped(const KernelLaunch& l, cudaStream_t stream) {
    auto* kernel = &quantizeKernel<Op, In, Code>;
    unsigned blocks = 0;
    if (cudaError_t e = residentBlocks(kernel, l.args.count, kVectorWidth<In>, blocks); e != cudaSuccess)
        return e;
    QuantizeArgs args = l.args;
    configureLaunch(args, static_cast<std::int64_t>(blocks) * kThreadsPerBlock, kVectorWidth<In>);
    kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(static_cast<const In*>(l.input),
                                                    static_cast<Code*>(l.codes), args);
    return cudaGetLastError();
}

template <class In> cudaError_t launchRangeTyped(const RangeLaunch& l, cudaStream_t stream) {
    auto* kernel = &rangeKernel<In>;
    unsigned blocks = 0;
    if (cudaError_t e = residentBlocks(kernel, l.args.count, kVectorWidth<In>, blocks); e != cudaSuccess)
        return e;
    QuantizeArgs args = l.args;
    configureLaunch(args, static_cast<std::int64_t>(blocks) * kThreadsPerBlock, kVectorWidth<In>);
    if (!args.vectorsShareScale) return cudaErrorInvalidValue;
    kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(static_cast<const In*>(l.input), WarpRanges{l.lo, l.hi},
                                                    args);
    return cudaGetLastError();
}

template <ScaleOp Op> cudaError_t launchForOp(const KernelLaunch& l, cudaStream_t stream) {
    switch (l.kind) {
    case InputKind::F32:
        return l.wideCodes ? launchTyped<Op, float, std::int32_t>(l, stream)
                           : launchTyped<Op, float, std::uint8_t>(l, stream);
    case InputKind::Bf16:
        return l.wideCodes ? launchTyped<Op, Bf16, std::int32_t>(l, stream)
                           : launchTyped<Op, Bf16, std::uint8_t>(l, stream);
    case InputKind::F16:
        return l.wideCodes ? launchTyped<Op, Half, std::int32_t>(l, stream)
                           : launchTyped<Op, Half, std::uint8_t>(l, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace

cudaError_t launchQuantize(KernelLaunch launch, cudaStream_t stream) {
    if (launch.args.count == 0) return cudaSuccess;
    cudaError_t result = cudaErrorInvalidValue;
    withScaleOp(launch.args.op.scaleOp,
                [&](auto op) { result = launchForOp<decltype(op)::value>(launch, stream); });
    return result;
}

cudaError_t launchRange(RangeLaunch launch, cudaStream_t stream) {
    if (launch.args.count == 0) return cudaSuccess;
    switch (launch.kind) {
    case InputKind::F32:
        return launchRangeTyped<float>(launch, stream);
    case InputKind::Bf16:
        return launchRangeTyped<Bf16>(launch, stream);
    case InputKind::F16:
        return launchRangeTyped<Half>(launch, stream);
    }
    return cudaErrorInvalidValue;
}

cudaError_t kernelImageStatus() {
    cudaFuncAttributes attributes{};
    return cudaFuncGetAttributes(&attributes, &quantizeKernel<ScaleOp::Divide, float, std::uint8_t>);
}

} // namespace ql::cuda
