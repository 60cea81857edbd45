#pragma once
// Importance files: per-input-channel activation statistics E[x_j^2] for each linear layer, read
// from llama.cpp importance matrices (the legacy binary .dat and the GGUF form) or from a
// safetensors file of QuantLens's own. Readers only; the weighting is done elsewhere.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ql {

/// One weight's activation statistics: the mean over the calibration tokens of x_j^2 for each
/// input channel j (the weight's last, contiguous dimension). Mixture-of-experts weights hold one
/// vector per expert, concatenated (matrices > 1).
struct ImportanceEntry {
    std::vector<float> sqMean; // matrices * channels values
    int matrices = 1;
    std::vector<double> counts; // tokens seen, per matrix (empty when the format does not say)
    /// Values per matrix.
    std::int64_t channels() const {
        return matrices > 0 ? static_cast<std::int64_t>(sqMean.size()) / matrices : 0;
    }
};

struct ImportanceFile {
    std::string path;
    std::string format; // "imatrix (legacy .dat)", "imatrix (GGUF)", "safetensors statistics"
    std::map<std::string, ImportanceEntry> entries; // keyed by the WEIGHT's name: "blk.0.attn_q.weight",
                                                    // "model.layers.0.mlp.up_proj.weight"
    std::vector<std::string> datasets;              // where the file says
    std::int64_t chunks = 0;                        // calibration chunks, where the file says
};

inline constexpr const char* kImatrixLegacyFormat = "imatrix (legacy .dat)";
inline constexpr const char* kImatrixGgufFormat = "imatrix (GGUF)";
inline constexpr const char* kSafetensorsStatsFormat = "safetensors statistics";

/// Reads any of the three forms, chosen by content (GGUF magic; safetensors header; else legacy).
/// Throws FileError (core/base/error.h) naming the file, the entry and the reason for anything
/// malformed. Means are what llama-quantize derives from the same file:
///  - legacy .dat: the stored values divided by the entry's ncall (as stored when ncall is 0).
///    The format keeps no per-expert split, so an MoE entry reads as one matrix of
///    experts * channels values, and counts stay empty;
///  - GGUF: <name>.in_sum2 / <name>.counts per matrix (counts rounded to whole tokens); a matrix
///    that saw no token reads as all ones, as llama.cpp fills partial data;
///  - safetensors: <module>.input_sq_mean [in_features] as is, or <module>.inputs [n, in_features]
///    (any leading dimensions) reduced to per-column means of squares in double; keyed
///    <module>.weight. Other tensors are ignored; __metadata__ "dataset" and "chunks" are read.
ImportanceFile readImportanceFile(const std::string& path);

/// The readers behind readImportanceFile, for callers that already know the form.
ImportanceFile readImatrixLegacy(const std::string& path);
ImportanceFile readImatrixGguf(const std::string& path);
ImportanceFile readSafetensorsStatistics(const std::string& path);

} // namespace ql
