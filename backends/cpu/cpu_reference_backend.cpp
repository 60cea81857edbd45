#include "cpu/cpu_reference_backend.h"

#include "quant/calibration.h"
#include "quant/reference.h"

#include <chrono>

namespace ql {

std::string CpuReferenceBackend::deviceDescription() const {
    return "CPU, scalar reference (1 thread)";
}

std::optional<std::string> CpuReferenceBackend::supports(const ResolvedSpec&) const {
    return std::nullopt; // the oracle implements every plan core can resolve
}

Result CpuReferenceBackend::run(const BackendTask& job, const ProgressFn& progress) const {
    std::vector<float> storage;
    const std::span<const float> x = jobValues(job, storage);
    Result result;
    result.plan = job.plan;
    result.timing = timeRepeats(job.repeat, runProgress(job, progress), [&] {
        PhaseTimes t;
        const auto start = std::chrono::steady_clock::now();
        result.params = job.params ? *job.params : calibrate(job.plan, x);
        t.prepareMs = msSince(start);
        const auto kernelStart = std::chrono::steady_clock::now();
        result.codes = quantizeReference(job.plan, result.params, x);
        t.kernelMs = msSince(kernelStart);
        t.totalMs = msSince(start);
        return t;
    });
    if (job.statistics) {
        result.statistics = accumulateReference(job.plan, result.params, result.codes, x, *job.statistics);
        reportProgress(progress, 1.0);
    }
    return result;
}

} // namespace ql
