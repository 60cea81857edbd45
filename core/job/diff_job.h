#pragma once
// Two checkpoints of the same model, tensor by tensor: the original against its quantized or
// converted version (a GGUF, a dequantized export, an ONNX QDQ model), or two exports. Names are
// matched exactly, then through the Hugging Face <-> GGUF (llama.cpp) naming and onnxruntime's QDQ
// naming; each pair gets the error statistics of B against A (A is the reference x, B the
// reconstruction x̂), the error histogram and the largest difference in units in the last place.
#include "analysis/error_stats.h"
#include "analysis/histogram.h"
#include "io/tensor_source.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ql {

/// A's name -> B's name; `how` says "exact", "gguf" (matched through the naming map) or "qdq" (a float
/// weight W and the DequantizeLinear output onnxruntime's quantizer names W_DequantizeLinear_Output).
struct TensorPair {
    std::string a;
    std::string b;
    std::string how;
};

struct TensorMatch {
    std::vector<TensorPair> pairs;  // in A's file order
    std::vector<std::string> onlyA; // A's tensors with no counterpart
    std::vector<std::string> onlyB;
};
TensorMatch matchTensors(const TensorSource& a, const TensorSource& b);

/// The llama.cpp GGUF name of a Hugging Face llama-family tensor name ("model.layers.3.mlp.up_proj.weight"
/// -> "blk.3.ffn_up.weight"); empty when it has none.
std::string ggufNameOf(const std::string& hfName);

struct TensorDiff {
    TensorPair pair;
    Shape shape;
    DType dtypeA = DType::F32;
    DType dtypeB = DType::F32;
    ErrorStats stats;
    Histogram error;         // x - x̂ = A - B, linear bins over ±max |A - B|
    std::int64_t maxUlp = 0; // in the coarser of the two dtypes (bf16, f16 or f32)
    std::string note;        // what to know when reading the figures
    std::string failure;     // non-empty: the pair could not be compared (shapes differ, ...)
};

/// Compares one pair. Never throws for a pair that cannot be compared: `failure` says why.
TensorDiff diffTensors(const TensorSource& a, const TensorSource& b, const TensorPair& pair);

/// The diff as a report ({"file", "file_b", "tensors": [{"name", "name_b", "shape", "dtype",
/// "dtype_b", "matched", "stats" (with "max_ulp"), "histograms": {"error"}, "note"} or {"error"}]}),
/// so that `check` gates it like any report.
nlohmann::json diffReport(const std::string& fileA, const std::string& fileB,
                          const std::vector<TensorDiff>& diffs);

} // namespace ql
