#include "cuda/cuda_backend.h"

#include "base/error.h"
#include "base/workers.h"
#include "cuda/cuda_context.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_job.h"
#include "cuda/cuda_range_params.h"
#include "quant/calibration.h"
#include "quant/reference.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

namespace ql {
namespace {

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1 << 30));
    return text;
}

// The job's input as it goes to the device: 16-bit tensors keep their 2 bytes (the kernel widens
// them exactly as Tensor::toFloat does); everything else is f32, converted by jobValues if needed.
cuda::HostInput deviceInputOf(const BackendTask& job, std::vector<float>& storage) {
    const std::int64_t n = elementCount(job.plan.shape);
    const DType dt = job.tensor.dtype();
    if (job.values.empty() && (dt == DType::BF16 || dt == DType::F16) && job.tensor.elementCount() == n)
        return {job.tensor.data(), dt == DType::BF16 ? cuda::InputKind::Bf16 : cuda::InputKind::F16, n};
    const std::span<const float> x = jobValues(job, storage);
    return {x.data(), cuda::InputKind::F32, n};
}

DType dtypeOf(cuda::InputKind kind) {
    switch (kind) {
    case cuda::InputKind::Bf16:
        return DType::BF16;
    case cuda::InputKind::F16:
        return DType::F16;
    case cuda::InputKind::F32:
        break;
    }
    return DType::F32;
}

// Writes one byte in every page of `bytes` at `p` on `threads` threads, so that the pages exist
// before a copy fills them (a fresh buffer's first touch costs more than the copy itself).
void faultIn(std::uint8_t* p, std::size_t bytes, unsigned threads) {
    constexpr std::size_t kPage = 4096;
    const std::size_t pages = (bytes + kPage - 1) / kPage;
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(pages / 256 + 1)));
    runOnWorkers(threads, [&](unsigned w) {
        for (std::size_t page = pages * w / threads; page < pages * (w + 1) / threads; ++page)
            p[page * kPage] = 0;
    });
}

// How the host's threads share the upload: copy workers, threads that fault in the code buffer,
// and calibration threads. Without a calibration on the host (given parameters, or ranges measured
// on the device) the host only copies, and the link takes what every copy worker moves; a host
// calibration is the longer task and gets most of the machine.
// An input too small to stage is copied by the driver: the calibration gets every thread.
struct HostShare {
    unsigned copiers, faulters, calibrators;

    static HostShare of(bool hostCalibrates, bool staged) {
        const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
        const unsigned workers = cuda::Staging::defaultWorkers();
        if (!staged) return {1, 1, hardware};
        if (!hostCalibrates) return {workers, std::max(1u, hardware - workers), 0};
        const unsigned copiers = std::max(1u, workers / 2);
        return {copiers, 1, std::max(1u, hardware - copiers - 1)};
    }
};

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

CudaBackend::~CudaBackend() = default;

std::optional<std::string> CudaBackend::unavailableReason() const {
    if (m_configError) return m_configError;
    return cuda::probeDevice(m_device).unavailable;
}

std::string CudaBackend::deviceDescription() const {
    if (unavailableReason()) return "NVIDIA GPU (not available)";
    return cuda::probeDevice(m_device).description;
}

std::optional<std::string> CudaBackend::supports(const ResolvedSpec& plan) const {
    if (auto why = unavailableReason()) return why;
    const std::int64_t inner = plan.shape.empty() ? 1 : plan.shape.back();
    if (inner > 0x7FFFFFFF)
        return "the last dimension has " + std::to_string(inner) +
               " elements; the kernels index columns with 32 bits (at most 2^31 - 1)";
    // Input (f32 at most), codes, and per group a scale, a zero point, a measured range (two keys),
    // a NaN flag and a clipping row of the statistics (64 bytes); the tables are smaller.
    const double n = static_cast<double>(elementCount(plan.shape));
    const double need = n * (4.0 + (plan.codeTarget == Target::Int32 ? 4.0 : 1.0)) +
                        84.0 * static_cast<double>(plan.scaleCount);
    const double have = static_cast<double>(cuda::probeDevice(m_device).totalMemory);
    if (need > have) return "the job needs " + gib(need) + " of device memory; the GPU has " + gib(have);
    return std::nullopt;
}

std::size_t CudaBackend::deviceBytesHeld() const {
    const std::lock_guard lock(m_mutex);
    return m_context ? m_context->heldBytes() : 0;
}

void CudaBackend::prepare() const {
    const std::lock_guard lock(m_mutex);
    if (m_configError || m_context || m_preparing.joinable()) return;
    m_preparing = std::jthread([this] {
        if (unavailableReason()) return; // run() says why
        const std::lock_guard held(m_mutex);
        try {
            if (!m_context && cudaSetDevice(m_device) == cudaSuccess) context();
        } catch (const std::exception&) {
            m_context.reset(); // the first run tries again and reports the error
        }
    });
}

cuda::DeviceContext& CudaBackend::context() const {
    if (!m_context) m_context = std::make_unique<cuda::DeviceContext>(m_device);
    return *m_context;
}

Result CudaBackend::run(const BackendTask& job, const ProgressFn& progress) const {
    if (auto why = supports(job.plan)) throw QuantError("cuda: " + *why);
    const ResolvedSpec& plan = job.plan;
    std::vector<float> storage;
    const cuda::HostInput input = deviceInputOf(job, storage);
    const cuda::HostScaleMap map = cuda::buildScaleMap(plan);
    auto checked = [&](QuantParams p) {
        checkParams(plan, p);
        return p;
    };
    // Given parameters are checked before any device work; calibrated ones as they come.
    const std::optional<QuantParams> given = job.params ? std::optional(checked(*job.params)) : std::nullopt;
    const std::lock_guard lock(m_mutex);
    const int runs = std::max(job.repeat, 1);
    int run = 0;
    Result result;
    result.plan = plan;
    const ProgressFn runsProgress = runProgress(job, progress);
    try {
        result.timing = timeRepeats(job.repeat, runsProgress, [&] {
            const RunProgress phases(runsProgress, run++, runs);
            PhaseTimes t;
            const auto start = std::chrono::steady_clock::now();
            result.codes = Codes(plan.codeTarget, input.count, Codes::Uninitialized{});
            if (input.count == 0) {
                result.params = given ? *given : checked(calibrate(plan, {}));
                t.prepareMs = t.totalMs = msSince(start);
                return t;
            }
            cuda::check(cudaSetDevice(m_device), "cudaSetDevice(" + std::to_string(m_device) + ")");
            cuda::DeviceContext& device = context();
            const cudaStream_t stream = device.stream();
            const cuda::Event uploadStart, uploadEnd, kernelStart, kernelEnd, downloadStart, downloadEnd;
            cuda::DeviceJob work(device, plan, map, input);
            phases.phaseDone(0.1);

            // Ranges (absmax, minmax) are measured on the device once the input is there; other
            // calibrations read the same view of the input on the host while the copy workers
            // stage it. Meanwhile spare threads fault in the code buffer's pages, so the download
            // writes into memory that is already there. The parameters follow on the stream.
            const bool rangesOnDevice = !given && rangeCalibrated(plan) && work.rangesOnDevice();
            const bool hostCalibrates = !given && !rangesOnDevice;
            const HostShare share = HostShare::of(hostCalibrates, cuda::Staging::worthStaging(input.bytes()));
            if (given) result.params = *given;
            uploadStart.record(stream);
            work.uploadInput(
                input, share.copiers,
                [&] {
                    // Codes that come back through the pinned chunks land in pages made meanwhile.
                    std::jthread fault;
                    if (cuda::Staging::worthStaging(work.codeBytes()))
                        fault = std::jthread(
                            [&] { faultIn(result.codes.data(), work.codeBytes(), share.faulters); });
                    if (!hostCalibrates) return;
                    const auto calibrationStart = std::chrono::steady_clock::now();
                    result.params =
                        checked(calibrateFast(plan, input.data, dtypeOf(input.kind), share.calibrators));
                    t.prepareMs = msSince(calibrationStart);
                },
                uploadEnd);
            if (rangesOnDevice) {
                const auto calibrationStart = std::chrono::steady_clock::now();
                std::vector<float> lo, hi;
                work.measureRanges(plan.scaleCount, lo, hi);
                result.params = checked(cuda::paramsFromRanges(plan, lo, hi));
                t.prepareMs = msSince(calibrationStart);
            }
            work.uploadParams(result.params);
            uploadEnd.synchronize();
            phases.phaseDone(0.4);

            // Kernel and download are bracketed by events on an otherwise idle stream, so each
            // times its phase alone, and cancel can act between phases.
            kernelStart.record(stream);
            work.launch();
            kernelEnd.record(stream);
            kernelEnd.synchronize();
            phases.phaseDone(0.6);

            downloadStart.record(stream);
            work.download(result.codes.data());
            downloadEnd.record(stream);
            downloadEnd.synchronize();
            t.uploadMs = cuda::elapsedMs(uploadStart, uploadEnd);
            t.kernelMs = cuda::elapsedMs(kernelStart, kernelEnd);
            t.downloadMs = cuda::elapsedMs(downloadStart, downloadEnd);
            t.totalMs = msSince(start);
            // The last run's statistics where its input and codes still are: only the sums, the
            // counts and the kept clipping rows cross the link.
            if (run == runs && job.statistics && cuda::statisticsOnDevice(plan, *job.statistics))
                result.statistics = cuda::deviceStatistics(device, work.tensors(), plan, result.params,
                                                           result.codes, *job.statistics);
            return t;
        });
    } catch (...) {
        // A cancel (between phases) or a bad calibration keeps the context once what is queued has
        // finished; a device left in an error state drops it, and the next job starts afresh.
        if (m_context && cudaStreamSynchronize(m_context->stream()) != cudaSuccess) m_context.reset();
        throw;
    }
    // What the device does not measure (int32 codes, the importance-weighted sums) the host does,
    // over the downloaded codes.
    if (!result.statistics) {
        accumulateOnHost(job, result, progress);
    } else if (job.statistics->importance) {
        std::vector<float> storage;
        result.statistics->weighted = accumulateWeighted(plan, result.params, result.codes,
                                                         jobView(job, storage), *job.statistics->importance);
    }
    return result;
}

} // namespace ql
