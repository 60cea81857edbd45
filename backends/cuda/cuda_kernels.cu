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

template <ScaleOp Op, class In, class Code>
cudaError_t launchTyped(const KernelLaunch& l, cudaStream_t stream) {
    auto* kernel = &quantizeKernel<Op, In, Code>;
    int device = 0, sms = 0, perSm = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess)
        return e;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreadsPerBlock, 0);
        e != cudaSuccess)
        return e;
    // One resident wave: enough 16-byte loads in flight to saturate memory, no tail of late blocks.
    const std::int64_t vectors = l.args.count / kVectorWidth<In>;
    const std::int64_t wanted = (vectors + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const std::int64_t resident = static_cast<std::int64_t>(sms) * (perSm > 0 ? perSm : 1);
    const auto blocks = static_cast<unsigned>(wanted < 1 ? 1 : (wanted < resident ? wanted : resident));
    QuantizeArgs args = l.args;
    configureLaunch(args, static_cast<std::int64_t>(blocks) * kThreadsPerBlock, kVectorWidth<In>);
    kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(static_cast<const In*>(l.input),
                                                    static_cast<Code*>(l.codes), args);
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

cudaError_t kernelImageStatus() {
    cudaFuncAttributes attributes{};
    return cudaFuncGetAttributes(&attributes, &quantizeKernel<ScaleOp::Divide, float, std::uint8_t>);
}

} // namespace ql::cuda
