// The statistics kernels: the bodies of cuda_statistics.h with the device's reductions around them.
// Counts are exact (shared-memory counters flushed with 64-bit atomics); pass one's sums are reduced
// across each warp and block in a fixed order and written per block, so the host merges them in
// block order; kept clipping rows take warp-combined atomics. Built with -fmad=false and IEEE
// division, so every x̂, edge and bin is the host's.
#include "cuda/cuda_statistics_launch.h"

namespace ql::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kAll = 0xFFFFFFFFu;

using U64 = unsigned long long;

__device__ void atomicAddCount(std::int64_t* at, std::int64_t v) {
    if (v) atomicAdd(reinterpret_cast<U64*>(at), static_cast<U64>(v));
}

__device__ void atomicAddSum(double* at, double v) {
    if (v != 0.0) atomicAdd(at, v);
}

// Non-negative doubles order as their bit patterns.
__device__ void atomicMaxMagnitude(double* at, double v) {
    if (v > 0.0) atomicMax(reinterpret_cast<U64*>(at), static_cast<U64>(__double_as_longlong(v)));
}

__device__ void addRowAtomically(GroupClipping* row, const GroupClipping& c) {
    atomicAddCount(&row->count, c.count);
    atomicAddCount(&row->clippedLow, c.clippedLow);
    atomicAddCount(&row->clippedHigh, c.clippedHigh);
    atomicAddCount(&row->flushedToZero, c.flushedToZero);
    atomicAddSum(&row->clipErrorSq, c.clipErrorSq);
    atomicAddSum(&row->roundErrorSq, c.roundErrorSq);
    atomicAddSum(&row->sumSqX, c.sumSqX);
    atomicMaxMagnitude(&row->maxAbsError, c.maxAbsError);
}

template <class T> __device__ T down(T v, int offset) {
    return __shfl_down_sync(kAll, v, offset);
}

__device__ GroupClipping down(const GroupClipping& c, int offset) {
    GroupClipping o;
    o.count = down(c.count, offset);
    o.clippedLow = down(c.clippedLow, offset);
    o.clippedHigh = down(c.clippedHigh, offset);
    o.flushedToZero = down(c.flushedToZero, offset);
    o.clipErrorSq = down(c.clipErrorSq, offset);
    o.roundErrorSq = down(c.roundErrorSq, offset);
    o.sumSqX = down(c.sumSqX, offset);
    o.maxAbsError = down(c.maxAbsError, offset);
    return o;
}

__device__ BlockSums down(const BlockSums& b, int offset) {
    BlockSums o;
    const ErrorStats::Sums& e = b.errors;
    o.errors = {down(e.count, offset),     down(e.finite, offset),        down(e.nanX, offset),
                down(e.infX, offset),      down(e.nonFiniteXhat, offset), down(e.over1e3, offset),
                down(e.over5e3, offset),   down(e.worstIndex, offset),    down(e.sumSqX, offset),
                down(e.sumSqXhat, offset), down(e.sumDot, offset),        down(e.sumSqErr, offset),
                down(e.sumAbsErr, offset), down(e.maxAbsErr, offset)};
    o.total = down(b.total, offset);
    return o;
}

// Lane 0 ends with the warp's merge of every lane's value (a fixed tree: the same order every run).
template <class T, class Merge> __device__ void reduceWarp(T& v, Merge&& merge) {
    for (int offset = 16; offset > 0; offset /= 2) {
        const T other = down(v, offset);
        merge(v, other);
    }
}

// A kept group's contribution: one set of atomics per warp when every contributing lane holds the
// same group (rows longer than a warp), else one per lane.
struct WarpRows {
    GroupClipping* rows;

    __device__ void operator()(bool valid, std::int64_t group, GroupClipping c) const {
        const unsigned voting = __ballot_sync(kAll, valid);
        if (!voting) return;
        const std::int64_t leader = __shfl_sync(kAll, group, __ffs(voting) - 1);
        if (__all_sync(kAll, !valid || group == leader)) {
            if (!valid) c = GroupClipping{};
            reduceWarp(c, [](GroupClipping& a, const GroupClipping& b) { a.merge(b); });
            if ((threadIdx.x & 31) == 0) addRowAtomically(rows + leader, c);
        } else if (valid) {
            addRowAtomically(rows + group, c);
        }
    }
};

template <class In>
__global__ void __launch_bounds__(kThreads)
    firstPassKernel(const In* __restrict__ x, StatisticsArgs args, BlockSums* __restrict__ blocks,
                    std::int64_t* __restrict__ codeCounts, GroupClipping* __restrict__ rows) {
    __shared__ unsigned int counts[256];
    __shared__ alignas(BlockSums) unsigned char warpBytes[sizeof(BlockSums) * kWarps]; // no constructors
    auto* warps = reinterpret_cast<BlockSums*>(warpBytes);
    for (int k = threadIdx.x; k < 256; k += kThreads)
        counts[k] = 0;
    __syncthreads();
    const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * kThreads;
    BlockSums mine = emptyBlockSums();
    firstPassStrided(
        x, args, thread, threads, static_cast<int>(threadIdx.x & 31), mine,
        [&](std::uint8_t code) { atomicAdd(&counts[code], 1u); }, WarpRows{rows});
    reduceWarp(mine, [](BlockSums& a, const BlockSums& b) { mergeBlockSums(a, b); });
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x / 32] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        BlockSums block = warps[0];
        for (int w = 1; w < kWarps; ++w)
            mergeBlockSums(block, warps[w]);
        blocks[blockIdx.x] = block;
    }
    for (int k = threadIdx.x; k < 256; k += kThreads)
        if (counts[k]) atomicAdd(reinterpret_cast<U64*>(codeCounts + k), static_cast<U64>(counts[k]));
}

template <class In>
__global__ void __launch_bounds__(kThreads)
    secondPassKernel(const In* __restrict__ x, StatisticsArgs args, HistogramSlots counters,
                     std::int64_t* __restrict__ slotCounts) {
    extern __shared__ unsigned int counts[];
    const int total = counters.total();
    for (int k = threadIdx.x; k < total; k += kThreads)
        counts[k] = 0;
    __syncthreads();
    const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * kThreads;
    secondPassStrided(x, args, counters, thread, threads, [&](int slot) { atomicAdd(&counts[slot], 1u); });
    __syncthreads();
    for (int k = threadIdx.x; k < total; k += kThreads)
        if (counts[k]) atomicAdd(reinterpret_cast<U64*>(slotCounts + k), static_cast<U64>(counts[k]));
}

template <class Kernel> cudaError_t residentGrid(Kernel* kernel, std::size_t sharedBytes, unsigned& blocks) {
    int device = 0, sms = 0, perSm = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess)
        return e;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, sharedBytes);
        e != cudaSuccess)
        return e;
    blocks = static_cast<unsigned>(sms * (perSm > 0 ? perSm : 1));
    return cudaSuccess;
}

// Fewer blocks than the device holds when the tensor is small: no block without a whole warp of work.
unsigned blocksFor(unsigned resident, std::int64_t count) {
    const std::int64_t wanted = (count + kThreads - 1) / kThreads;
    return static_cast<unsigned>(wanted < 1 ? 1 : (wanted < resident ? wanted : resident));
}

template <class In> cudaError_t firstTyped(const FirstPassLaunch& l, cudaStream_t stream) {
    auto* kernel = &firstPassKernel<In>;
    const unsigned blocks = l.blocks; // firstPassBlocks(): the host sized blocksOut for it
    if (blocks == 0) return cudaErrorInvalidValue;
    StatisticsArgs args = l.args;
    configureLaunch(args.walk, static_cast<std::int64_t>(blocks) * kThreads, 1);
    kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const In*>(l.input), args, l.blocksOut, l.codeCounts,
                                            l.rows);
    return cudaGetLastError();
}

template <class In> cudaError_t secondTyped(const SecondPassLaunch& l, cudaStream_t stream) {
    auto* kernel = &secondPassKernel<In>;
    const std::size_t shared = static_cast<std::size_t>(l.counters.total()) * sizeof(unsigned int);
    unsigned resident = 0;
    if (cudaError_t e = residentGrid(kernel, shared, resident); e != cudaSuccess) return e;
    const unsigned blocks = blocksFor(resident, l.args.walk.count);
    StatisticsArgs args = l.args;
    configureLaunch(args.walk, static_cast<std::int64_t>(blocks) * kThreads, 1);
    kernel<<<blocks, kThreads, shared, stream>>>(static_cast<const In*>(l.input), args, l.counters,
                                                 l.slotCounts);
    return cudaGetLastError();
}

template <template <class> class Typed, class Launch>
cudaError_t byKind(InputKind kind, const Launch& l, cudaStream_t stream) {
    switch (kind) {
    case InputKind::F32:
        return Typed<float>::run(l, stream);
    case InputKind::Bf16:
        return Typed<Bf16>::run(l, stream);
    case InputKind::F16:
        return Typed<Half>::run(l, stream);
    }
    return cudaErrorInvalidValue;
}

template <class In> struct First {
    static cudaError_t run(const FirstPassLaunch& l, cudaStream_t s) { return firstTyped<In>(l, s); }
};
template <class In> struct Second {
    static cudaError_t run(const SecondPassLaunch& l, cudaStream_t s) { return secondTyped<In>(l, s); }
};

} // namespace

unsigned firstPassBlocks(std::int64_t count) {
    unsigned resident = 0;
    if (residentGrid(&firstPassKernel<float>, 0, resident) != cudaSuccess) return 0;
    return blocksFor(resident, count);
}

cudaError_t launchFirstPass(const FirstPassLaunch& launch, cudaStream_t stream) {
    if (launch.args.walk.count == 0) return cudaSuccess;
    return byKind<First>(launch.kind, launch, stream);
}

cudaError_t launchSecondPass(const SecondPassLaunch& launch, cudaStream_t stream) {
    if (launch.args.walk.count == 0) return cudaSuccess;
    if (launch.counters.total() > kMaxHistogramSlots) return cudaErrorInvalidValue;
    return byKind<Second>(launch.kind, launch, stream);
}

} // namespace ql::cuda
