#include "base/error.h"
#include "job/job.h"
#include "job/tensor_measurement.h"

namespace ql {

SweepOutcome runSweepJob(const JobRequest& request, const std::string& name,
                         const std::vector<std::int64_t>& sizes, const std::function<void(int, int)>& started,
                         const ProgressFn& progress) {
    const TensorSource& source = *request.source;
    const TensorInfo& info = requireTensor(source, name);
    const Backend& backend = request.registry->require(request.backend);
    const LoadedTensor tensor(source, info);
    QuantSpec spec = specForTensor(request, request.spec, info); // the role's reduction axis unless named
    SweepOutcome out;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (started) started(static_cast<int>(i), static_cast<int>(sizes.size()));
        spec.groupSize = sizes[i];
        spec.block = {sizes[i]};
        ResolvedSpec plan;
        try {
            plan = planForTensor(request, spec, info);
        } catch (const QuantError& e) { // a size the tensor cannot take: the others still run
            out.skipped.emplace_back(sizes[i], e.what());
            continue;
        }
        try {
            out.reports.push_back(
                measureTensor(tensor, plan, backend,
                              // the rows a report lists (the smallest sizes have the most groups)
                              {.repeat = request.repeat,
                               .progress = progress,
                               .importance = request.importance.get(),
                               .groupRows = ReportOptions{}.maxGroups})
                    .report);
            out.sizes.push_back(sizes[i]);
        } catch (const QuantError& e) {
            throw QuantError(
                whereIn(source, name, "group size " + std::to_string(sizes[i]) + ": " + e.what()));
        }
    }
    if (out.reports.empty()) {
        std::string why = "no group size fits:";
        for (const auto& [size, reason] : out.skipped)
            why += " " + std::to_string(size) + " (" + reason + ");";
        why.pop_back();
        throw QuantError(whereIn(source, name, why));
    }
    return out;
}

} // namespace ql
