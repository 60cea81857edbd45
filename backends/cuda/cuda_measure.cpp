#include "cuda/cuda_measure.h"

#include "cuda/cuda_device.h"
#include "cuda/cuda_job.h"

#include <algorithm>
#include <cstring>

namespace ql::cuda {
namespace {

void selectDevice() {
    std::optional<std::string> error;
    const int device = deviceFromEnvironment(error);
    if (error) throw QuantError(*error);
    if (const auto& why = probeDevice(device).unavailable) throw QuantError(*why);
    check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
}

// Best of `repeat` event-timed runs of `enqueue` on `stream`, after one warm-up.
template <class Fn> double bestOf(int repeat, const Stream& stream, Fn&& enqueue) {
    const Event start, end;
    enqueue();
    stream.synchronize();
    double best = 1e300;
    for (int r = 0; r < std::max(repeat, 1); ++r) {
        start.record(stream.get());
        enqueue();
        end.record(stream.get());
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
    return bestOf(repeat, stream, [&] {
        check(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()),
              "cudaMemcpyAsync(device to device)");
    });
}

double bestKernelMs(const QuantPlan& plan, const QuantParams& params, const Tensor& input, int repeat,
                    const Codes& expected) {
    selectDevice();
    const DType dt = input.dtype();
    if (dt != DType::F32 && dt != DType::BF16 && dt != DType::F16)
        throw QuantError("bestKernelMs takes f32, bf16 or f16 input");
    const InputKind kind = dt == DType::F32    ? InputKind::F32
                           : dt == DType::BF16 ? InputKind::Bf16
                                               : InputKind::F16;
    const HostInput host{input.data(), kind, input.elementCount()};
    const HostScaleMap map = buildScaleMap(plan);
    const Stream stream;
    DeviceJob job(plan, params, map, host, stream.get());
    job.upload(host);
    const double best = bestOf(repeat, stream, [&] { job.launch(); });
    if (expected.size() > 0) {
        Codes got(plan.codeTarget, host.count, Codes::Uninitialized{});
        job.download(got.data());
        if (!(got == expected)) throw QuantError("cuda: the benchmark's codes differ from the CPU's");
    }
    return best;
}

} // namespace ql::cuda
