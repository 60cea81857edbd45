#pragma once
// fn(worker) for worker in [0, workers): worker 0 on the calling thread, the others on threads of
// their own, all joined before it returns. If a thread cannot be started, the ones already running
// are joined before the error propagates (a joinable std::thread left behind would terminate).
#include <exception>
#include <thread>
#include <vector>

namespace ql {

template <typename Fn> void runOnWorkers(unsigned workers, Fn&& fn) {
    std::vector<std::thread> pool;
    std::exception_ptr failed;
    try {
        for (unsigned w = 1; w < workers; ++w)
            pool.emplace_back([&fn, w] { fn(w); });
        fn(0u);
    } catch (...) {
        failed = std::current_exception();
    }
    for (auto& t : pool)
        t.join();
    if (failed) std::rethrow_exception(failed);
}

} // namespace ql
