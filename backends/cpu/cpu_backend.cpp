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
    const ProgressFn runsProgress = runProgress(job, progress);
    reportProgress(runsProgress, 0.0);
    const cpu::DriverOptions options{m_threads, m_chunk};
    // The statistics on this backend's threads (the result never depends on them), measured in the
    // last run; their histogram pass reports the second half of the progress.
    std::optional<AnalysisOptions> statistics;
    if (job.statistics) {
        statistics = job.statistics->options;
        if (statistics->threads == 0) statistics->threads = m_threads;
        statistics->progress = {};
        if (progress)
            statistics->progress = [&progress](double done) { reportProgress(progress, 0.5 + 0.5 * done); };
    }
    std::optional<TensorAnalysis> analysis;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        cpu::DriverOutput out =
            cpu::runJob(job, options, r + 1 == repeat && statistics ? &*statistics : nullptr, runsProgress,
                        static_cast<double>(r) / repeat, 1.0 / repeat);
        PhaseTimes t;
        t.prepareMs = out.prepareMs;
        t.kernelMs = out.kernelMs;
        t.totalMs = msSince(start) - out.histogramMs; // the statistics' histograms are not the run's
        runs.push_back(t);
        result.params = std::move(out.params);
        result.codes = std::move(out.codes);
        analysis = std::move(out.analysis);
    }
    result.timing = Timing::fromRuns(runs);
    if (analysis) {
        TensorAccumulators a;
        a.analysis = std::move(*analysis);
        if (job.statistics->importance) {
            std::vector<float> storage;
            a.weighted = accumulateWeighted(result.plan, result.params, result.codes, jobView(job, storage),
                                            *job.statistics->importance);
        }
        result.statistics = std::move(a);
    }
    return result;
}

} // namespace ql
