#include "backend/backend.h"
#include "base/error.h"

#include <algorithm>
#include <cstdint>

namespace ql {

std::span<const float> jobValues(const BackendTask& job, std::vector<float>& storage) {
    std::span<const float> values = job.values;
    if (values.empty() && job.tensor.elementCount() > 0) {
        // F32 tensors are used in place; everything else is converted once.
        const bool aligned = reinterpret_cast<std::uintptr_t>(job.tensor.data()) % alignof(float) == 0;
        if (job.tensor.dtype() == DType::F32 && aligned) {
            values = {reinterpret_cast<const float*>(job.tensor.data()),
                      static_cast<std::size_t>(job.tensor.elementCount())};
        } else {
            storage = job.tensor.toFloatVector();
            values = storage;
        }
    }
    if (static_cast<std::int64_t>(values.size()) != elementCount(job.plan.shape))
        throw QuantError("job has " + std::to_string(values.size()) + " values but the plan's shape " +
                         toString(job.plan.shape) + " needs " + std::to_string(elementCount(job.plan.shape)));
    return values;
}

ValuesView jobView(const BackendTask& job, std::vector<float>& storage) {
    if (job.values.empty() && job.tensor.elementCount() > 0) {
        // The analysis reads elements with memcpy: any alignment is read in place.
        if (auto view = ValuesView::of(job.tensor); view && view->count == elementCount(job.plan.shape))
            return *view;
    }
    return ValuesView::of(jobValues(job, storage));
}

ProgressFn runProgress(const BackendTask& job, const ProgressFn& progress) {
    if (!job.statistics || !progress) return progress;
    return [&progress](double done) { return progress(0.5 * done); };
}

void accumulateOnHost(const BackendTask& job, Result& result, const ProgressFn& progress) {
    if (!job.statistics) return;
    std::vector<float> storage;
    const ValuesView x = jobView(job, storage);
    std::function<void(double)> reporting;
    if (progress) reporting = [&progress](double done) { reportProgress(progress, 0.5 + 0.5 * done); };
    result.statistics = accumulate(result.plan, result.params, result.codes, x, *job.statistics, reporting);
}

bool reportProgress(const ProgressFn& progress, double done) {
    if (progress && !progress(done)) throw Cancelled();
    return true;
}

Timing timeRepeats(int repeat, const ProgressFn& progress, const std::function<PhaseTimes()>& once) {
    const int runs = std::max(repeat, 1);
    std::vector<PhaseTimes> times;
    reportProgress(progress, 0.0);
    for (int r = 0; r < runs; ++r) {
        times.push_back(once());
        reportProgress(progress, static_cast<double>(r + 1) / runs);
    }
    return Timing::fromRuns(times);
}

} // namespace ql
