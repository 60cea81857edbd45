#include "cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "quant/calibration.h"
#include "quant/layout.h"
#include "quant/reference.h"

namespace ql {

CpuBackend::CpuBackend(unsigned threads, std::int64_t chunkElements)
    : m_threads(threads ? threads : std::max(1u, std::thread::hardware_concurrency()))
    , m_chunk(std::max<std::int64_t>(chunkElements, 1)) {}

std::string CpuBackend::deviceDescription() const {
    return "CPU, " + std::to_string(m_threads) + (m_threads == 1 ? " thread" : " threads");
}

std::optional<std::string> CpuBackend::supports(const QuantPlan&) const { return std::nullopt; }

Codes CpuBackend::quantizeChunked(const QuantPlan& plan, const QuantParams& params, std::span<const float> x,
                                  const ProgressFn& progress, double base, double span) const {
    checkParams(plan, params);
    const auto n = static_cast<std::int64_t>(x.size());
    Codes codes(plan.codeTarget, n);
    const ScaleIndexer indexer(plan.layout, plan.shape);
    const std::int64_t chunks = (n + m_chunk - 1) / m_chunk;
    std::atomic<std::int64_t> next{0};
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::condition_variable changed;
    std::int64_t finished = 0;
    // Chunks never share a code byte (codes are unpacked), so workers write without locks.
    auto work = [&] {
        for (std::int64_t c; !cancel.load(std::memory_order_relaxed) && (c = next.fetch_add(1)) < chunks;) {
            const std::int64_t end = std::min(n, (c + 1) * m_chunk);
            for (std::int64_t i = c * m_chunk; i < end; ++i) {
                const std::int64_t s = indexer.scaleIndexOf(i);
                codes.set(i, quantizeValue(x[static_cast<std::size_t>(i)], params.scales[static_cast<std::size_t>(s)],
                                           params.zeroPointOf(s), plan));
            }
            {
                const std::lock_guard lock(mutex);
                ++finished;
            }
            changed.notify_one();
        }
    };
    const auto workers = static_cast<unsigned>(std::min<std::int64_t>(m_threads, std::max<std::int64_t>(chunks, 1)));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < workers; ++t) pool.emplace_back(work);
    // The calling thread only reports: callers see every callback on their own thread, in order,
    // ending with 1.0, however the workers are scheduled.
    std::int64_t reported = 0;
    while (reported < chunks && !cancel) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return finished != reported; });
        reported = finished;
        lock.unlock();
        if (progress && !progress(base + span * static_cast<double>(reported) / static_cast<double>(chunks)))
            cancel = true;
    }
    for (auto& t : pool) t.join();
    if (cancel) throw Cancelled();
    return codes;
}

Result CpuBackend::run(const Job& job, const ProgressFn& progress) const {
    std::vector<float> storage;
    const std::span<const float> x = jobValues(job, storage);
    Result result;
    result.plan = job.plan;
    std::vector<PhaseTimes> runs;
    const int repeat = std::max(job.repeat, 1);
    reportProgress(progress, 0.0);
    for (int r = 0; r < repeat; ++r) {
        PhaseTimes t;
        const auto start = std::chrono::steady_clock::now();
        result.params = job.params ? *job.params : calibrate(job.plan, x);
        t.prepareMs = msSince(start);
        const auto kernelStart = std::chrono::steady_clock::now();
        result.codes = quantizeChunked(job.plan, result.params, x, progress, static_cast<double>(r) / repeat,
                                       1.0 / repeat);
        t.kernelMs = msSince(kernelStart);
        t.totalMs = msSince(start);
        runs.push_back(t);
    }
    result.timing = Timing::fromRuns(runs);
    return result;
}

} // namespace ql
