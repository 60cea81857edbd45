#pragma once
// The planner suites' yardstick: one tensor quantized by the job, and its error computed here from the
// scalar reference's x̂, not by the code under test.
#include "job/job.h"
#include "quant/reference.h"

#include <string>
#include <vector>

namespace qltest {

struct DirectError {
    ql::TensorOutcome run;
    double error = 0;
};

/// Σ s_j (x − x̂)² with s per input channel (empty: every channel 1).
inline DirectError directError(const ql::JobRequest& request, const ql::QuantSpec& spec,
                               const std::string& name, const std::vector<double>& s = {}) {
    ql::JobRequest r = request;
    r.spec = spec;
    DirectError d{ql::runTensorJob(r, name), 0.0};
    const std::vector<float> x = request.source->load(name).toFloatVector();
    const std::vector<float> xhat =
        ql::dequantizeReference(d.run.a.report.plan, d.run.a.report.params, d.run.a.codes);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double e = double(x[i]) - xhat[i];
        d.error += (s.empty() ? 1.0 : s[i % s.size()]) * e * e;
    }
    return d;
}

} // namespace qltest
