#pragma once
// llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute) reorders the rows of the q and k
// projections of llama-family models for its rotary layout: within each head, the two halves of the
// head's rows are interleaved. A diff of the Hugging Face checkpoint against the GGUF undoes that
// order with the head counts the GGUF's metadata records.
#include <cstdint>
#include <string>
#include <vector>

namespace ql {

class GgufSource;

/// For each Hugging Face row, the row the converter writes it to: the rows as (heads, 2, half) with
/// the last two axes swapped. Throws QuantError when `rows` is not a multiple of 2 * heads.
std::vector<std::int64_t> llamaRowPermutation(std::int64_t rows, std::int64_t heads);

struct LlamaRows {
    std::vector<std::int64_t> ggufRowOf; // Hugging Face row -> GGUF row; empty: rows as stored
    std::string note;                    // what was undone, or why nothing was (empty: nothing to say)
};

/// The converter's permutation of `ggufName` (a blk.N.attn_q / attn_k weight or bias of `rows` rows)
/// in a llama-family GGUF, from <arch>.attention.head_count (and head_count_kv for k). Other tensors
/// and architectures: empty, no note. Missing or unusable head counts: empty, and a note saying so.
LlamaRows llamaRowsOf(const GgufSource& gguf, const std::string& ggufName, std::int64_t rows);

} // namespace ql
