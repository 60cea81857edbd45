#include "backend/timing.h"

#include <algorithm>

namespace ql {
namespace {

struct PhaseSummary {
    double median = 0;
    double min = 0;
    double max = 0;
};

PhaseSummary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return {median, v.front(), v.back()};
}

} // namespace

Timing Timing::fromRuns(const std::vector<PhaseTimes>& runs) {
    Timing t;
    t.runs = static_cast<int>(runs.size());
    if (runs.empty()) return t;
    // One pass per phase keeps the member list in a single place.
    double PhaseTimes::*const phases[] = {&PhaseTimes::prepareMs, &PhaseTimes::uploadMs,
                                          &PhaseTimes::kernelMs, &PhaseTimes::downloadMs,
                                          &PhaseTimes::totalMs};
    for (auto phase : phases) {
        std::vector<double> v;
        v.reserve(runs.size());
        for (const auto& r : runs)
            v.push_back(r.*phase);
        const PhaseSummary s = summarize(std::move(v));
        t.median.*phase = s.median;
        t.min.*phase = s.min;
        t.max.*phase = s.max;
    }
    return t;
}

} // namespace ql
