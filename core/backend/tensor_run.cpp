#include "backend/tensor_run.h"

#include "analysis/analyzer.h"
#include "tensor/error.h"

namespace ql {

TensorRun runTensor(const TensorInfo& info, std::span<const float> values, const QuantSpec& spec,
                    const Backend& backend, const std::optional<QuantParams>& params, int repeat,
                    const ProgressFn& progress) {
    Job job;
    job.plan = planQuantization(spec, info.shape);
    if (auto why = backend.supports(job.plan))
        throw QuantError("backend " + backend.name() + " cannot run it: " + *why);
    job.values = values;
    job.params = params;
    job.repeat = repeat;
    TensorRun run;
    run.result = backend.run(job, progress);
    TensorReport& r = run.report;
    r.name = info.name;
    r.shape = info.shape;
    r.dtype = info.dtype;
    r.plan = run.result.plan;
    r.backend = backend.name();
    r.params = run.result.params;
    r.timing = run.result.timing;
    r.analysis = analyze(r.plan, r.params, run.result.codes, values);
    return run;
}

} // namespace ql
