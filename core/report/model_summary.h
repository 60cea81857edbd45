#pragma once
// A whole-model run in a few lines: how many tensors were quantized, kept and failed (with their
// reasons), the error of every quantized weight taken together, the worst tensor as the table ranks
// it, and the weights' size and bits per weight before and after. Both front ends print it from the
// run's reports; nothing is measured again.
#include "report/report.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ql {

class TensorSource;

/// Stored sizes of a set of tensors, in bits: before, as the model file stores them (dtype bits per
/// element); after, quantized tensors as QuantLens stores them (io/export_tensors.h quantizedBits:
/// codes at their width, scales, zero points, NVFP4's tensor scale) and the others unchanged.
struct StoredSize {
    std::int64_t elements = 0;
    std::int64_t bitsBefore = 0;
    std::int64_t bitsAfter = 0;
    /// NaN when there are no elements.
    double bitsPerWeightBefore() const { return perElement(bitsBefore); }
    double bitsPerWeightAfter() const { return perElement(bitsAfter); }

private:
    double perElement(std::int64_t bits) const {
        return elements ? static_cast<double>(bits) / static_cast<double>(elements) : std::nan("");
    }
};

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
    /// Every tensor of the run (kept and failed ones at their stored size both before and after).
    StoredSize model;
    /// The quantized tensors alone.
    StoredSize quantizedSize;
};

/// `source`, the file the run read (none: a report read back), counts a tensor that the file stores
/// in another type than it decodes to (GGUF's Q4_K, read as f32) at its stored size before; without
/// it every tensor counts at its dtype's.
ModelSummary summarizeModel(const std::vector<TensorReport>& reports, const TensorSource* source = nullptr);

/// The summary as sentences, one per line: "Overall SQNR 31.25 dB over 1024 quantized values; worst
/// tensor a.weight at 18.02 dB.", then the sizes ("Weights 10.8 MB → 2.9 MB; quantized tensors 32.00
/// → 4.25 bits per weight; whole model 32.00 → 5.10 bits per weight."), then the kept and failed
/// tensors' reasons with their counts ("Kept unquantized, 3 tensor(s): a bias, norm or scale vector ...").
std::string summaryText(const ModelSummary& summary);

} // namespace ql
