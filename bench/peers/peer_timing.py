"""Best-of-N timing for the peer scripts, the way the C++ benchmarks time (bench/bench_limit.h)."""
import time


def best_ms(fn, repeat):
    """The fastest of `repeat` runs of fn after one warm-up (first-touch allocations, lazy set-up), in ms."""
    fn()
    t = float("inf")
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - s)
    return t * 1e3
