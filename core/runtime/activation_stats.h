#pragma once
// Activation statistics from a model run: for each weight, E[x_j^2] over the data input of
// the node that consumes it, one value per input channel j of the weight, laid out as the importance
// reader (job/importance.h) reads it for the weight's role: the input-channel axis of a Linear,
// conv or recurrent weight; a depthwise conv's filters, each reading its one channel.
#include "runtime/model_rewrite.h"
#include "runtime/ort_runtime.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ql {

class TensorSource;

/// One weight's statistics: the mean of x^2 per input channel over every sample and position.
struct ActivationStat {
    std::string weight;
    std::string input;          // the consumer's data input they were taken from
    std::vector<float> sqMean;  // one per input channel of the weight (its role's reduction axis)
    std::int64_t positions = 0; // values averaged per channel
};

/// Where each weight's consumer reads its data, and the running sums over the samples.
class ActivationCollector {
public:
    /// The weights among `weights` (names in `model`, described by `source`) whose first consumer
    /// takes a data input along the weight's input channels: input 1 of Conv, ConvTranspose, MatMul,
    /// Gemm, and the input weights of GRU/LSTM/RNN; input 0 of MatMul and Gemm (the data then
    /// input 1). The others are listed in skipped() with the reason.
    ActivationCollector(const ModelRewriter& model, const TensorSource& source,
                        const std::vector<std::string>& weights);

    /// The tensors add() needs by name: graph inputs and node outputs.
    std::vector<std::string> inputs() const;
    /// Adds one sample: `find` gives each of inputs() (nullptr when the run did not produce it).
    /// Throws QuantError when a data input's channels do not match its weight.
    void add(const std::function<const HostTensor*(const std::string&)>& find);
    /// The means so far (every tapped weight that saw a value).
    std::vector<ActivationStat> stats() const;
    const std::vector<std::pair<std::string, std::string>>& skipped() const { return m_skipped; }

private:
    struct Tap {
        std::string weight;
        std::string input;
        int axis = 1;              // of the data input; -1: its last, -2: the one before it
        std::int64_t channels = 0; // values the weight's entry holds
        bool depthwise = false;    // filter o reads data channel o / (channels / data channels)
        std::vector<double> sum;
        std::int64_t positions = 0;
    };
    std::vector<Tap> m_taps;
    std::vector<std::pair<std::string, std::string>> m_skipped; // weight, why
};

/// Writes the statistics as float32 `<module>.input_sq_mean` for a weight named `<module>.weight` and
/// `<weight>.input_sq_mean` for any other (readSafetensorsStatistics keys them `<module>.weight` and
/// `<weight>.weight`, both of which job/importance.h matches to the weight), atomically, with
/// __metadata__ "dataset" and "chunks" (the samples).
void writeActivationStats(const std::string& path, const std::vector<ActivationStat>& stats,
                          const std::string& dataset, int samples, const std::string& model);

} // namespace ql
