#pragma once
// A whole-model run in a few lines: how many tensors were quantized, kept and failed (with their
// reasons), the error of every quantized weight taken together, and the worst tensor as the table
// ranks it. Both front ends print it from the run's reports; nothing is measured again.
#include "report/report.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ql {

struct ModelSummary {
    int quantized = 0;
    std::int64_t quantizedElements = 0;
    /// Each distinct reason with how many tensors it kept unquantized (or failed), most common first.
    std::vector<std::pair<std::string, int>> kept;
    std::vector<std::pair<std::string, int>> failed;
    /// 10 log10(Σx² / Σ(x − x̂)²) over every finite element of every quantized tensor: their error
    /// statistics merged (ErrorStats::merge), so large tensors weigh by their size. NaN when none.
    double sqnrDb = std::nan("");
    /// The first quantized tensor of the table worst first (sortWorstFirst: by the importance-weighted
    /// SQNR when the run had one); empty when none was quantized.
    std::string worst;
    double worstSqnrDb = std::nan("");
    double worstWeightedSqnrDb = std::nan("");
};

ModelSummary summarizeModel(const std::vector<TensorReport>& reports);

/// The summary as sentences, one per line: "Overall SQNR 31.25 dB over 1024 quantized values; worst
/// tensor a.weight at 18.02 dB." then the kept and failed tensors' reasons with their counts
/// ("Kept unquantized, 3 tensor(s): a bias, norm or scale vector ...").
std::string summaryText(const ModelSummary& summary);

} // namespace ql
