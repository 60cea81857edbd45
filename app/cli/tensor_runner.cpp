#include "cli/tensor_runner.h"

#include "cli/cli_error.h"
#include "quant/calibration.h"
#include "tensor/error.h"

namespace ql::cli {

std::vector<float> loadValues(const TensorSource& source, const std::string& name) {
    return source.load(name).toFloatVector();
}

TensorRun quantizeTensor(const TensorInfo& info, const std::vector<float>& values, const QuantSpec& spec,
                         const Backend& backend, const std::optional<QuantParams>& params, int repeat,
                         const ProgressFn& progress) {
    Job job;
    job.plan = planQuantization(spec, info.shape);
    if (auto why = backend.supports(job.plan)) throw QuantError("backend " + backend.name() + " cannot run it: " + *why);
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

const Backend& pickBackend(const BackendRegistry& registry, const std::string& name) {
    const Backend* b = registry.find(name);
    if (!b) throw UsageError("unknown backend '" + name + "' (this build has: " + registry.names() + ")");
    if (auto why = b->unavailableReason()) throw QuantError("backend " + name + " is unavailable: " + *why);
    return *b;
}

QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to) {
    QuantParams out = p;
    for (float& s : out.scales) s = operatorScaleFromStep(stepFromOperatorScale(s, from), to);
    return out;
}

std::string oneLine(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

} // namespace ql::cli
