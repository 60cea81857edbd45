#include "runtime/output_objective.h"

#include "base/error.h"
#include "io/printable.h"
#include "runtime/model_rewrite.h"

#include <algorithm>

namespace ql {

OutputObjective::OutputObjective(const std::string& model, const EvaluateOptions& inputs)
    : m_runtime(OrtRuntime::find())
    , m_model(std::make_unique<ModelRewriter>(model))
    , m_path(model) {
    m_outcome.runtime = "ONNX Runtime " + m_runtime->version() + " (" + m_runtime->path() + ")";
    const auto plain = m_runtime->open(m_model->original(), model);
    m_samples = evaluationSamples(inputs, plain->inputs(), m_outcome);
    for (const auto& sample : m_samples) {
        auto& outs = m_float.emplace_back();
        for (const HostTensor& t : plain->run(sample, m_model->graphOutputs()))
            outs.push_back(ortIsFloat(t.type) ? t.toDoubles() : std::vector<double>());
    }
}

OutputObjective::~OutputObjective() = default;

bool OutputObjective::replaces(const std::string& weight) const {
    const auto& w = m_model->weights();
    return std::find(w.begin(), w.end(), weight) != w.end();
}

double OutputObjective::squaredError(const std::string& weight, const std::vector<float>& values) const {
    if (!replaces(weight))
        throw QuantError("'" + printable(weight) +
                         "' is not a float32 weight of the main graph, which the model run can replace");
    const auto one = m_runtime->open(m_model->rewrite({{weight, &values}}, {}),
                                     m_path + " (only " + printable(weight) + " quantized)");
    double sum = 0;
    for (std::size_t s = 0; s < m_samples.size(); ++s) {
        const auto got = one->run(m_samples[s], m_model->graphOutputs());
        for (std::size_t g = 0; g < got.size(); ++g) {
            const std::vector<double>& ref = m_float[s][g];
            if (ref.empty()) continue;
            const std::vector<double> q = got[g].toDoubles();
            if (q.size() != ref.size())
                throw QuantError(m_path + ": output '" + printable(got[g].name) +
                                 "' changes size when only " + printable(weight) + " is quantized");
            for (std::size_t i = 0; i < ref.size(); ++i) {
                const double d = ref[i] - q[i];
                sum += d * d; // a NaN or Inf here makes the choice unusable, as it should
            }
        }
    }
    return sum;
}

} // namespace ql
