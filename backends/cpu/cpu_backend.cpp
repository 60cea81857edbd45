#include "cpu/cpu_backend.h"

#include "cpu/cpu_driver.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace ql {

CpuBackend::CpuBackend(unsigned threads, std::int64_t chunkElements)
    : m_threads(threads ? threads : std::max(1u, std::thread::hardware_concurrency()))
    , m_chunk(std::max<std::int64_t>(chunkElements, 1)) {}

std::string CpuBackend::deviceDescription() const {
    return "CPU, " + std::to_string(m_threads) + (m_threads == 1 ? " thread" : " threads") + ", " +
           cpu::kernelIsa() + " kernels";
}

std::optional<std::string> CpuBackend::supports(const ResolvedSpec&) const {
    return std::nullopt;
}

CpuBackend::Measured CpuBackend::runImpl(const BackendTask& job, bool measure,
                                         const ProgressFn& progress) const {
    Measured m;
    m.result.plan = job.plan;
    std::vector<PhaseTimes> runs;
    const int repeat = std::max(job.repeat, 1);
    const ProgressFn runsProgress = runProgress(job, progress);
    reportProgress(runsProgress, 0.0);
    const cpu::DriverOptions options{m_threads, m_chunk};
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        cpu::DriverOutput out =
            cpu::runJob(job, options, measure, runsProgress, static_cast<double>(r) / repeat, 1.0 / repeat);
        PhaseTimes t;
        t.totalMs = msSince(start);
        t.prepareMs = out.prepareMs;
        t.kernelMs = out.kernelMs;
        runs.push_back(t);
        m.result.params = std::move(out.params);
        m.result.codes = std::move(out.codes);
        m.errors = out.errors;
        m.passes = out.passes;
    }
    m.result.timing = Timing::fromRuns(runs);
    if (job.statistics) {
        // The vector statistics pass over this backend's threads (the result never depends on them).
        std::vector<float> storage;
        StatisticsRequest request = *job.statistics;
        if (request.options.threads == 0) request.options.threads = m_threads;
        std::function<void(double)> reporting;
        if (progress) reporting = [&progress](double done) { reportProgress(progress, 0.5 + 0.5 * done); };
        m.result.statistics = accumulate(m.result.plan, m.result.params, m.result.codes,
                                         jobView(job, storage), request, reporting);
    }
    return m;
}

Result CpuBackend::run(const BackendTask& job, const ProgressFn& progress) const {
    return runImpl(job, false, progress).result;
}

CpuBackend::Measured CpuBackend::runMeasured(const BackendTask& job, const ProgressFn& progress) const {
    return runImpl(job, true, progress);
}

} // namespace ql
