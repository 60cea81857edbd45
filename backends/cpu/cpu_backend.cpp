#include "cpu/cpu_backend.h"

#include "cpu/cpu_driver.h"

#include <algorithm>
#include <chrono>
#include <optional>
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

Result CpuBackend::run(const BackendTask& job, const ProgressFn& progress) const {
    Result result;
    result.plan = job.plan;
    std::vector<PhaseTimes> runs;
    const int repeat = std::max(job.repeat, 1);
    reportProgress(progress, 0.0);
    const cpu::DriverOptions options{m_threads, m_chunk};
    // The statistics measured in the last run's quantize pass, which reports the progress.
    std::optional<StatisticsRequest> statistics = job.statistics;
    if (statistics) {
        statistics->options.progress = {};
        if (statistics->options.threads == 0) statistics->options.threads = m_threads;
    }
    std::optional<TensorAccumulators> accumulators;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        cpu::DriverOutput out =
            cpu::runJob(job, options, r + 1 == repeat && statistics ? &*statistics : nullptr, progress,
                        static_cast<double>(r) / repeat, 1.0 / repeat);
        PhaseTimes t;
        t.prepareMs = out.prepareMs;
        t.kernelMs = out.kernelMs;
        t.totalMs = msSince(start) - out.statisticsMs; // the statistics' merging is not the run's
        runs.push_back(t);
        result.params = std::move(out.params);
        result.codes = std::move(out.codes);
        if (out.analysis)
            accumulators = TensorAccumulators{std::move(*out.analysis), std::move(out.weighted)};
    }
    result.timing = Timing::fromRuns(runs);
    result.statistics = std::move(accumulators);
    return result;
}

} // namespace ql
