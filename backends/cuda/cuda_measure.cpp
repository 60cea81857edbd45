#include "cuda/cuda_measure.h"

#include "cuda/cuda_context.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_job.h"

#include <algorithm>
#include <cstring>

namespace ql::cuda {
namespace {

int selectDevice() {
    std::optional<std::string> error;
    const int device = deviceFromEnvironment(error);
    if (error) throw QuantError(*error);
    if (const auto& why = probeDevice(device).unavailable) throw QuantError(*why);
    check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
    return device;
}

// Best of `repeat` event-timed runs of `enqueue` on `stream`, after one warm-up.
template <class Fn> double bestOf(int repeat, cudaStream_t stream, Fn&& enqueue) {
    const Event start, end;
    enqueue();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    double best = 1e300;
    for (int r = 0; r < std::max(repeat, 1); ++r) {
        start.record(stream);
        enqueue();
        end.record(stream);
        end.synchronize();
        best = std::min(best, elapsedMs(start, end));
    }
    return best;
}

} // namespace

double bestCopyMs(std::size_t bytes, int repeat) {
    selectDevice();
    const Stream stream;
    const DeviceBuffer from(bytes), to(bytes);
    check(cudaMemsetAsync(from.get(), 1, bytes, stream.get()), "cudaMemsetAsync");
    return bestOf(repeat, stream.get(), [&] {
        check(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()),
              "cudaMemcpyAsync(device to device)");
    });
}

double bestPinnedCopyMs(std::size_t bytes, bool toDevice, int repeat) {
    selectDevice();
    const Stream stream;
    const DeviceBuffer device(bytes);
    const PinnedBuffer host(bytes);
    std::memset(host.get(), 1, bytes);
    return bestOf(repeat, stream.get(), [&] {
        check(toDevice
                  ? cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get())
                  : cudaMemcpyAsync(host.get(), device.get(), bytes, cudaMemcpyDeviceToHost, stream.get()),
              "cudaMemcpyAsync(pinned)");
    });
}

double bestKernelMs(const ResolvedSpec& plan, const QuantParams& params, const Tensor& input, int repeat,
                    const Codes& expected) {
    const int device = selectDevice();
    const DType dt = input.dtype();
    if (dt != DType::F32 && dt != DType::BF16 && dt != DType::F16)
        throw QuantError("bestKernelMs takes f32, bf16 or f16 input");
    const InputKind kind = dt == DType::F32    ? InputKind::F32
                           : dt == DType::BF16 ? InputKind::Bf16
                                               : InputKind::F16;
    const HostInput host{input.data(), kind, input.elementCount()};
    const HostScaleMap map = buildScaleMap(plan);
    DeviceContext context(device);
    DeviceJob job(context, plan, map, host);
    const Event landed;
    job.uploadInput(host, Staging::defaultWorkers(), {}, landed);
    job.uploadParams(params);
    const double best = bestOf(repeat, context.stream(), [&] { job.launch(); });
    if (expected.size() > 0) {
        Codes got(plan.codeTarget, host.count, Codes::Uninitialized{});
        job.download(got.data());
        if (!(got == expected)) throw QuantError("cuda: the benchmark's codes differ from the CPU's");
    }
    return best;
}

} // namespace ql::cuda
