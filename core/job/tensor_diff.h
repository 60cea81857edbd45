#pragma once
// Two checkpoints of the same model, tensor by tensor: the original against its quantized or
// converted version (a GGUF, a dequantized export, an ONNX QDQ model), or two exports. Names are
// matched exactly, then through the Hugging Face <-> GGUF (llama.cpp) naming and onnxruntime's QDQ
// naming; each pair gets the error statistics of B against A (A is the reference x, B the
// reconstruction x̂), the error histogram and the largest difference in units in the last place.
// q and k of a llama-family GGUF are compared in the Hugging Face row order (io/llama_rows.h); when
// both sides store codes on one grid (or A is re-quantized), the codes are compared too.
#include "analysis/code_diff.h"
#include "analysis/error_stats.h"
#include "analysis/histogram.h"
#include "io/tensor_source.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ql {

/// A's name -> B's name; `how` says "exact", "gguf" (matched through the naming map), "qdq" (a float
/// weight W and the DequantizeLinear output onnxruntime's quantizer names W_DequantizeLinear_Output) or
/// "compressed-tensors" (W and a pack-quantized export's W_packed, read as its dequantization).
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
    std::int64_t maxUlp = 0; // in the coarser of the two dtypes (bf16, f16 or f32); finite pairs only
    // NaN/Inf, which every figure above leaves out: how many elements of A and of B are NaN/Inf, and
    // how many of those are not matched by the same NaN/Inf on the other side (one side only, NaN
    // against Inf, +Inf against -Inf; in one format, other bits). A pair with any is not bit-identical.
    std::int64_t nonFiniteA = 0;
    std::int64_t nonFiniteB = 0;
    std::int64_t nonFiniteMismatches = 0;
    std::string note;    // what to know when reading the figures
    std::string failure; // non-empty: the pair could not be compared (shapes differ, ...)
    /// Both sides' stored codes compared (A's re-quantization when the diff re-quantizes); absent
    /// when either has none or the grids differ (then `note` says why).
    std::optional<CodeDiff> codes;
};

struct JobRequest;

/// Compares one pair. Never throws for a pair that cannot be compared: `failure` says why.
/// With `requantize`, A's tensor is quantized with its spec (its backend, its explicit scales) through
/// the job pipeline and those codes are compared with B's stored ones; its source, when set, must be A.
TensorDiff diffTensors(const TensorSource& a, const TensorSource& b, const TensorPair& pair,
                       const JobRequest* requantize = nullptr);

/// The diff as a report ({"file", "file_b", "tensors": [{"name", "name_b", "shape", "dtype",
/// "dtype_b", "matched", "stats" (with "max_ulp", "non_finite_count_b", "non_finite_mismatches"),
/// "histograms": {"error"}, "codes", "note"} or {"error"}]}), so that `check` gates it like any report.
nlohmann::json diffReport(const std::string& fileA, const std::string& fileB,
                          const std::vector<TensorDiff>& diffs);

} // namespace ql
