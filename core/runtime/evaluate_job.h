#pragma once
// What quantization does to a model's outputs: the float model and the model whose weights
// hold their quantized-then-dequantized values (the preset's exact arithmetic on the chosen backend,
// core/job's model run, dequantized with core/quant's reference) run through ONNX Runtime on the same
// inputs. Per graph output: SQNR, cosine, max |Δ| and, for class scores, top-1/top-5 agreement and KL;
// per layer (every node output): the cumulative error (every weight quantized) and the local one (only
// that node's weights quantized).
#include "job/job.h"
#include "runtime/activation_stats.h"
#include "runtime/ort_runtime.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ql {

struct EvaluateOptions {
    std::string inputs;     // a .safetensors / .npz of named inputs, first axis the samples; or
    int random = 0;         // ... this many samples generated from the input shapes (standard normal)
    std::uint64_t seed = 0; // for `random`
    std::map<std::string, std::int64_t> dims; // dynamic dimensions by name (a dynamic first one is 1)
    bool local = true;                        // the per-layer local runs (one run per weighted node)
    /// The quantized side from this model instead of the spec: the same graph with its weights stored
    /// quantized (a QDQ export), run as it is. No weights are quantized, no local runs.
    std::string against;
    /// Quantize one weight at a time and measure the graph outputs' error: one run per weight and
    /// sample.
    bool sensitivity = false;
    /// Collect each weight's input statistics (E[x^2] per input channel of its consumer's data input)
    /// from the float run, for an importance file.
    bool activations = false;
    /// Told what the run will cost (runs of the model) once the weights and samples are known, before
    /// the long part starts.
    std::function<void(const std::string&)> announce;
};

/// Errors of one tensor, over every sample: 10·log10(Σref² / Σ(ref−q)²), cosine, max |ref−q|.
struct ErrorMetrics {
    double sqnrDb = 0;
    double cosine = 0;
    double maxAbs = 0;
    std::int64_t count = 0;
    std::int64_t nonFinite = 0; // elements where either side is NaN or Inf (left out of the sums)
};

struct OutputMetrics {
    std::string name;
    std::string type; // "float32", ...
    Shape shape;      // of one sample's output
    ErrorMetrics error;
    bool classes = false;       // its last axis read as class scores (rank 2 or 3, at least 2 classes)
    std::int64_t rows = 0;      // rows of class scores compared
    double top1 = 0;            // rows whose float and quantized top-1 class agree
    std::optional<double> top5; // rows whose float top-1 class is in the quantized top 5 (>= 5 classes)
    double kl = 0;              // mean KL(float ‖ quantized) over rows, natural log
    bool softmaxed = false;     // the rows were logits (softmax applied); false: they already summed to 1
};

struct LayerMetrics {
    std::string output; // the node output
    std::string node;   // node name, or "OpType_index"
    std::string opType;
    std::vector<std::string> weights; // the quantized weights it reads
    ErrorMetrics cumulative;
    std::optional<ErrorMetrics> local; // nodes that read a quantized weight
};

/// The graph outputs' error with only one weight quantized (every float output together).
struct WeightSensitivity {
    std::string weight;
    ErrorMetrics output;
};

struct EvaluateOutcome {
    std::string runtime; // "ONNX Runtime 1.30.0 (PATH)"
    std::string against; // the model the quantized side came from, when not the spec
    int samples = 0;
    bool generated = false; // the inputs were generated (they measure less than real ones)
    std::vector<std::string> inputNotes;
    std::vector<TensorReport> weights; // the model run's reports: quantized, passed-through, failed
    int quantized = 0;
    std::vector<OutputMetrics> outputs;
    std::vector<LayerMetrics> layers;
    /// With EvaluateOptions::sensitivity: every quantized weight, the most sensitive (lowest output
    /// SQNR) first.
    std::vector<WeightSensitivity> sensitivity;
    /// With EvaluateOptions::activations: each weight's input statistics from the float run, and the
    /// weights that have none (name, why).
    std::vector<ActivationStat> activations;
    std::vector<std::pair<std::string, std::string>> activationsSkipped;
    /// Each graph output over the samples (first axis), float and quantized model: what --save-outputs
    /// writes.
    std::vector<HostTensor> floatOutputs;
    std::vector<HostTensor> quantizedOutputs;
};

/// The samples the options name (`inputs`, or `random` generated ones), checked against the model's
/// inputs `decls`: sets the outcome's inputNotes and generated. Throws FileError, QuantError.
std::vector<std::vector<HostTensor>> evaluationSamples(const EvaluateOptions& options,
                                                       const std::vector<TensorDecl>& decls,
                                                       EvaluateOutcome& outcome);

/// Runs the evaluation for the request's model (an ONNX file; its float32 weights of rank >= 2 in the
/// main graph are quantized with the request's spec). Throws RuntimeError (runtime missing or
/// unsupported, model refused), FileError (inputs file), QuantError (inputs that do not fit the model),
/// Cancelled.
EvaluateOutcome runEvaluateJob(const JobRequest& request, const EvaluateOptions& options,
                               const ProgressFn& progress = {});

} // namespace ql
