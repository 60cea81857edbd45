#pragma once
// fn(worker) for worker in [0, workers): worker 0 on the calling thread, the others on threads of
// their own, all joined before it returns. An exception from any worker (or from starting a thread)
// is carried to the caller once every started thread has been joined: the lowest worker's first, so
// which error a caller sees does not depend on timing. (An exception escaping a std::thread, or a
// joinable std::thread left behind, would terminate the process.)
#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace ql {

template <typename Fn> void runOnWorkers(unsigned workers, Fn&& fn) {
    workers = std::max(workers, 1u);
    std::vector<std::exception_ptr> failed(workers);
    auto guarded = [&fn, &failed](unsigned w) noexcept {
        try {
            fn(w);
        } catch (...) {
            failed[w] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    std::exception_ptr notStarted;
    try {
        pool.reserve(workers - 1);
        for (unsigned w = 1; w < workers; ++w)
            pool.emplace_back(guarded, w);
    } catch (...) {
        notStarted = std::current_exception();
    }
    if (!notStarted) guarded(0u);
    for (auto& t : pool)
        t.join();
    if (notStarted) std::rethrow_exception(notStarted);
    for (const auto& e : failed)
        if (e) std::rethrow_exception(e);
}

} // namespace ql
