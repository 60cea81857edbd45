#pragma once
// The planner's output objective (`plan --objective output`): the error a weight's quantized
// values cause at the model's outputs, measured by running the model through ONNX Runtime with only
// that weight replaced, on the same samples as the float run it is compared with.
#include "runtime/evaluate_job.h"

#include <memory>
#include <string>
#include <vector>

namespace ql {

class ModelRewriter;

class OutputObjective {
public:
    /// Finds the runtime, reads the model (an ONNX file) and the samples `inputs` names (its `inputs`
    /// file or `random` generated ones, `seed`, `dims`), and runs the float model once per sample.
    /// Throws RuntimeError, FileError, QuantError as evaluate does.
    OutputObjective(const std::string& model, const EvaluateOptions& inputs);
    ~OutputObjective();
    OutputObjective(const OutputObjective&) = delete;
    OutputObjective& operator=(const OutputObjective&) = delete;

    int samples() const { return static_cast<int>(m_samples.size()); }
    /// Where the samples came from ("from FILE", or each generated input's shape) and whether they
    /// were generated.
    const std::vector<std::string>& inputNotes() const { return m_outcome.inputNotes; }
    bool generated() const { return m_outcome.generated; }
    const std::string& runtime() const { return m_outcome.runtime; }
    /// Whether `weight` is one the run can replace (a float32 weight of the main graph).
    bool replaces(const std::string& weight) const;

    /// The model run with only `weight` holding `values`: Σ over the samples and every floating-point
    /// graph output of (float − quantized)². One session and one run per sample. Throws QuantError for
    /// a weight the run cannot replace, RuntimeError when the runtime fails.
    double squaredError(const std::string& weight, const std::vector<float>& values) const;

private:
    std::shared_ptr<const OrtRuntime> m_runtime;
    std::unique_ptr<ModelRewriter> m_model;
    std::string m_path;
    EvaluateOutcome m_outcome; // the input notes
    std::vector<std::vector<HostTensor>> m_samples;
    std::vector<std::vector<std::vector<double>>> m_float; // per sample, per graph output (empty: not float)
};

} // namespace ql
