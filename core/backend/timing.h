#pragma once
// Wall-clock phases of a backend run. Repeated runs keep the median and the spread (min..max).
#include <chrono>
#include <vector>

namespace ql {

/// The phases follow one another, except on the cuda backend, where a calibration done on the host
/// (prepare) runs while the input uploads: there total >= max(prepare, upload) + kernel + download.
struct PhaseTimes {
    double prepareMs = 0; // calibration and anything done before the data moves
    double uploadMs = 0;
    double kernelMs = 0;
    double downloadMs = 0;
    double totalMs = 0;
};

struct Timing {
    PhaseTimes median;
    PhaseTimes min;
    PhaseTimes max;
    int runs = 0;

    /// Median, min and max of each phase over `runs` (empty: all zero, runs 0).
    static Timing fromRuns(const std::vector<PhaseTimes>& runs);
};

/// Milliseconds since `start`, for filling PhaseTimes.
inline double msSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace ql
