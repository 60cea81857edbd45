#pragma once
// What every benchmark measures its figures against, in the same run: the machine's streaming limit
// (read f32, write int8, nothing else), the counting floor of a job with statistics, and best-of-N
// timing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ql::bench {

/// The Python the peers run under: $QUANTLENS_PYTHON, else Debian's (which has python3-torch and
/// python3-numpy), else the first python3 on PATH.
inline std::string peerPython() {
    if (const char* p = std::getenv("QUANTLENS_PYTHON"); p && *p) return p;
    return std::ifstream("/usr/bin/python3").good() ? "/usr/bin/python3" : "python3";
}
/// A script in bench/peers/.
inline std::string peerScript(const char* name) {
    std::string dir = __FILE__;
    return dir.substr(0, dir.find_last_of('/')) + "/peers/" + name;
}

/// One run of fn, in milliseconds.
inline double timedMs(const std::function<void()>& fn) {
    const auto s = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
}

/// Best of `repeat` runs of fn after one warm-up, in milliseconds.
inline double bestMs(int repeat, const std::function<void()>& fn) {
    fn(); // warm-up
    double best = 1e300;
    for (int r = 0; r < repeat; ++r)
        best = std::min(best, timedMs(fn));
    return best;
}

/// A function timed in turn with others, `runs` times per turn.
struct InTurn {
    std::function<void()> fn;
    int runs = 1;
};

/// Best times of each of fns taken in turn (each fns[i] `runs` times, then the next, for `repeat`
/// turns), after one warm-up of each: their ratios then compare runs seconds apart, not minutes, on
/// a machine whose speed drifts. A quick one can take several runs a turn, so its best comes from as
/// many samples as a standalone best-of-N would give it. Returns each one's best, in the order given.
inline std::vector<double> bestMsInTurn(int repeat, const std::vector<InTurn>& fns) {
    for (const InTurn& f : fns)
        f.fn();
    std::vector<double> best(fns.size(), 1e300);
    for (int r = 0; r < repeat; ++r)
        for (std::size_t i = 0; i < fns.size(); ++i)
            for (int k = 0; k < fns[i].runs; ++k)
                best[i] = std::min(best[i], timedMs(fns[i].fn));
    return best;
}

// The streaming limit: read fp32, write int8, nothing else, over `threads` threads. Built for the
// widest ISA the CPU has, so the loop is bound by memory and not by baseline SSE2 conversions.
#define QL_LIMIT_LOOP(NAME, TARGET, LANES)                                                                   \
    TARGET inline void NAME(const float* x, std::int8_t* out, std::size_t b, std::size_t e) {                \
        using vf = float __attribute__((vector_size(4 * (LANES))));                                          \
        using vi = std::int32_t __attribute__((vector_size(4 * (LANES))));                                   \
        using vb = std::int8_t __attribute__((vector_size((LANES))));                                        \
        for (std::size_t i = b; i + (LANES) <= e; i += (LANES)) {                                            \
            vf v;                                                                                            \
            std::memcpy(&v, x + i, sizeof v);                                                                \
            const vb c = __builtin_convertvector(__builtin_convertvector(v, vi), vb);                        \
            std::memcpy(out + i, &c, sizeof c);                                                              \
        }                                                                                                    \
    }
QL_LIMIT_LOOP(limitAvx512, __attribute__((target("avx512f,avx512bw,avx512vl"))), 16)
QL_LIMIT_LOOP(limitAvx2, __attribute__((target("avx2"))), 8)
QL_LIMIT_LOOP(limitBase, , 4)
#undef QL_LIMIT_LOOP

/// One run of the streaming limit over `threads` threads (x read, out written).
inline void limitRun(const std::vector<float>& x, std::vector<std::int8_t>& out, unsigned threads) {
    __builtin_cpu_init();
    auto* loop = __builtin_cpu_supports("avx512bw") ? &limitAvx512
                 : __builtin_cpu_supports("avx2")   ? &limitAvx2
                                                    : &limitBase;
    const std::size_t n = x.size();
    auto part = [&](std::size_t b, std::size_t e) { loop(x.data(), out.data(), b, e); };
    std::vector<std::thread> pool;
    const std::size_t step = (n / threads + 15) / 16 * 16;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(part, t * step, std::min(n, (t + 1) * step));
    part(0, std::min(n, step));
    for (auto& th : pool)
        th.join();
}

/// Best of `repeat` runs of the streaming limit, in milliseconds.
inline double limitMs(const std::vector<float>& x, std::vector<std::int8_t>& out, unsigned threads,
                      int repeat) {
    return bestMs(repeat, [&] { limitRun(x, out, threads); });
}

/// Each thread's part of the counting floor: four counts per element (value, error, |error| and code
/// histograms), each into one of four tables taken in turn (as the analysis pass spreads its counts),
/// with bins from the element's own bits (T: the input's f32 or 16-bit storage); nothing else.
/// Returns the number of counts, so none is dropped.
template <typename T> std::uint64_t countInto(const T* x, std::size_t b, std::size_t e) {
    static constexpr int kHistograms = 4, kTables = 4, kBins = 256;
    static constexpr int kShift = (8 * static_cast<int>(sizeof(T)) - 8) / (kHistograms - 1);
    std::vector<std::uint32_t> tables(kHistograms * kTables * kBins, 0u);
    std::uint32_t* t = tables.data();
    auto count = [t](const T* v, int table) {
        std::uint32_t u = 0;
        std::memcpy(&u, v, sizeof(T));
        for (int h = 0; h < kHistograms; ++h)
            ++t[(h * kTables + table) * kBins + ((u >> (kShift * h)) & 0xFF)];
    };
    std::size_t i = b;
    for (; i + kTables <= e; i += kTables)
        for (int k = 0; k < kTables; ++k)
            count(x + i + k, k);
    for (; i < e; ++i)
        count(x + i, 0);
    std::uint64_t sum = 0;
    for (std::uint32_t c : tables)
        sum += c;
    return sum;
}

/// One run of the counting floor: reading the input as the job stores it (f32, or 16-bit values) and
/// making the four histogram counts per element that every job with statistics makes (the exact
/// counts are the contract), counted as the analysis pass counts them, nothing else, over `threads`
/// threads. A job that counts this way cannot beat it, whatever its sums cost; a different way of
/// counting could. Says so on stderr if a count went missing.
template <typename T> void countingFloorRun(const std::vector<T>& x, unsigned threads) {
    const std::size_t n = x.size();
    std::vector<std::uint64_t> sums(threads);
    std::vector<std::thread> pool;
    const std::size_t step = (n + threads - 1) / threads;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back([&, t] { sums[t] = countInto(x.data(), t * step, std::min(n, (t + 1) * step)); });
    sums[0] = countInto(x.data(), 0, std::min(n, step));
    for (auto& th : pool)
        th.join();
    std::uint64_t total = 0;
    for (std::uint64_t s : sums)
        total += s;
    if (total != 4 * n)
        std::fprintf(stderr, "counting floor: %llu counts for %zu elements\n",
                     static_cast<unsigned long long>(total), n);
}

} // namespace ql::bench
