#pragma once
// Chunked parallel loop with the backend progress contract: workers claim chunks from an atomic
// counter; the calling thread works too and is the only one that calls `progress`, so callbacks
// arrive on the caller's thread, in order. Cancel is seen by every worker within one chunk. A chunk
// that throws stops the others at their next chunk, and its exception reaches the caller
// (runOnWorkers).
#include "backend/backend.h"
#include "base/workers.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace ql::cpu {

/// fn(chunk, worker) for chunk in [0, chunks); worker in [0, threads). Throws Cancelled.
template <typename Fn>
void parallelChunks(unsigned threads, std::int64_t chunks, Fn&& fn, const ProgressFn& progress, double base,
                    double span) {
    std::atomic<std::int64_t> next{0}, finished{0};
    std::atomic<bool> cancel{false};
    auto work = [&](unsigned worker) {
        try {
            for (std::int64_t c;
                 !cancel.load(std::memory_order_relaxed) && (c = next.fetch_add(1)) < chunks;) {
                fn(c, worker);
                const std::int64_t done = finished.fetch_add(1) + 1;
                if (worker == 0 && progress && done < chunks &&
                    !progress(base + span * static_cast<double>(done) / static_cast<double>(chunks)))
                    cancel = true;
            }
        } catch (...) {
            cancel = true;
            throw;
        }
    };
    runOnWorkers(static_cast<unsigned>(std::clamp<std::int64_t>(chunks, 1, std::max(threads, 1u))), work);
    if (cancel) throw Cancelled();
    if (progress && !progress(base + span)) throw Cancelled();
}

} // namespace ql::cpu
