#include "cuda/cuda_backend.h"

#include "cuda/cuda_device.h"
#include "cuda/cuda_job.h"
#include "quant/calibration.h"
#include "quant/reference.h"
#include "tensor/error.h"

#include <chrono>
#include <cstdio>

namespace ql {
namespace {

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1 << 30));
    return text;
}

// The job's input as it goes to the device: 16-bit tensors keep their 2 bytes (the kernel widens
// them exactly as Tensor::toFloat does); everything else is f32, converted by jobValues if needed.
cuda::HostInput deviceInputOf(const Job& job, std::vector<float>& storage) {
    const std::int64_t n = elementCount(job.plan.shape);
    const DType dt = job.tensor.dtype();
    if (job.values.empty() && (dt == DType::BF16 || dt == DType::F16) && job.tensor.elementCount() == n)
        return {job.tensor.data(), dt == DType::BF16 ? cuda::InputKind::Bf16 : cuda::InputKind::F16, n};
    const std::span<const float> x = jobValues(job, storage);
    return {x.data(), cuda::InputKind::F32, n};
}

// Progress inside run `run` of `runs`: timeRepeats reports (run + 1) / runs after it.
class RunProgress {
public:
    RunProgress(const ProgressFn& progress, int run, int runs)
        : m_progress(progress)
        , m_run(run)
        , m_runs(runs) {}
    void phaseDone(double fraction) const { reportProgress(m_progress, (m_run + fraction) / m_runs); }

private:
    const ProgressFn& m_progress;
    int m_run, m_runs;
};

} // namespace

CudaBackend::CudaBackend() {
    m_device = cuda::deviceFromEnvironment(m_configError);
}

std::optional<std::string> CudaBackend::unavailableReason() const {
    if (m_configError) return m_configError;
    return cuda::probeDevice(m_device).unavailable;
}

std::string CudaBackend::deviceDescription() const {
    if (unavailableReason()) return "NVIDIA GPU (not available)";
    return cuda::probeDevice(m_device).description;
}

std::optional<std::string> CudaBackend::supports(const QuantPlan& plan) const {
    if (auto why = unavailableReason()) return why;
    const std::int64_t inner = plan.shape.empty() ? 1 : plan.shape.back();
    if (inner > 0x7FFFFFFF)
        return "the last dimension has " + std::to_string(inner) +
               " elements; the kernels index columns with 32 bits (at most 2^31 - 1)";
    // Input (f32 at most), codes and one scale and zero point per group; the tables are smaller.
    const double n = static_cast<double>(elementCount(plan.shape));
    const double need = n * (4.0 + (plan.codeTarget == Target::Int32 ? 4.0 : 1.0)) +
                        8.0 * static_cast<double>(plan.scaleCount);
    const double have = static_cast<double>(cuda::probeDevice(m_device).totalMemory);
    if (need > have) return "the job needs " + gib(need) + " of device memory; the GPU has " + gib(have);
    return std::nullopt;
}

Result CudaBackend::run(const Job& job, const ProgressFn& progress) const {
    if (auto why = supports(job.plan)) throw QuantError("cuda: " + *why);
    const QuantPlan& plan = job.plan;
    std::vector<float> storage;
    const cuda::HostInput input = deviceInputOf(job, storage);
    // Calibration reads f32, as cpu-reference's does: 16-bit input is widened on the host for it.
    std::span<const float> calibrationValues;
    if (!job.params)
        calibrationValues = input.kind == cuda::InputKind::F32
                                ? std::span<const float>(static_cast<const float*>(input.data),
                                                         static_cast<std::size_t>(input.count))
                                : jobValues(job, storage);
    const cuda::HostScaleMap map = cuda::buildScaleMap(plan);
    const int runs = std::max(job.repeat, 1);
    int run = 0;
    Result result;
    result.plan = plan;
    result.timing = timeRepeats(job.repeat, progress, [&] {
        const RunProgress phases(progress, run++, runs);
        PhaseTimes t;
        const auto start = std::chrono::steady_clock::now();
        {
            result.params = job.params ? *job.params : calibrate(plan, calibrationValues);
            checkParams(plan, result.params); // before any device resource is taken
            result.codes = Codes(plan.codeTarget, input.count, Codes::Uninitialized{});
            if (input.count == 0) {
                t.prepareMs = t.totalMs = msSince(start);
                return t;
            }
            cuda::check(cudaSetDevice(m_device), "cudaSetDevice(" + std::to_string(m_device) + ")");
            const cuda::Stream stream;
            const cuda::Event uploadStart, uploadEnd, kernelStart, kernelEnd, downloadStart, downloadEnd;
            cuda::DeviceJob device(plan, result.params, map, input, stream.get());
            t.prepareMs = msSince(start);
            phases.phaseDone(0.1);

            // Each phase is bracketed by events on an idle stream and waited for, so the events time
            // the phase alone (host-side staging included) and cancel can act between phases.
            uploadStart.record(stream.get());
            device.upload(input);
            uploadEnd.record(stream.get());
            uploadEnd.synchronize();
            phases.phaseDone(0.4);

            kernelStart.record(stream.get());
            device.launch();
            kernelEnd.record(stream.get());
            kernelEnd.synchronize();
            phases.phaseDone(0.6);

            downloadStart.record(stream.get());
            device.download(result.codes.data());
            downloadEnd.record(stream.get()); // after the last chunk left the pinned buffer
            downloadEnd.synchronize();
            t.uploadMs = cuda::elapsedMs(uploadStart, uploadEnd);
            t.kernelMs = cuda::elapsedMs(kernelStart, kernelEnd);
            t.downloadMs = cuda::elapsedMs(downloadStart, downloadEnd);
        } // buffers, events and stream released before the total is taken
        t.totalMs = msSince(start);
        return t;
    });
    return result;
}

} // namespace ql
