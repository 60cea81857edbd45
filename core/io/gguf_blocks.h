#pragma once
// ggml's block formats, decoded from their definition: every block is integer codes plus one scale
// (and, for some types, one offset) per sub-block, and an element's value is scale * code + offset.
// The arithmetic follows ggml's reference dequantizers step for step, so results match bit for bit.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ql {

class GgufSource;

/// ggml type ids as they appear in GGUF tensor infos (ggml.h's enum ggml_type).
enum class GgmlType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30,
};

struct GgmlTypeTraits {
    std::string_view name; // "Q4_K", as ggml spells it
    int blockElems;        // elements per block (1 for F32/F16/BF16)
    int blockBytes;        // bytes per block
    int subBlockElems;     // elements sharing one scale (0 for unquantized types)
    bool hasOffset;        // a per-sub-block offset (min) besides the scale
};

/// Traits of the types QuantLens decodes; nullopt for ids it does not know (or ggml removed).
std::optional<GgmlTypeTraits> ggmlTypeTraits(std::uint32_t id);
/// How ggml spells a type id ("IQ4_XS"), decoded here or not; "id N" for one ggml.h does not
/// name.
std::string ggmlTypeName(std::uint32_t id);
bool isQuantized(GgmlType t);

/// Decodes one block of a quantized type: blockElems codes, blockElems / subBlockElems scales and
/// (when hasOffset) as many offsets.
void decodeBlock(GgmlType t, const std::byte* block, std::int8_t* codes, float* scales, float* offsets);

/// Dequantizes `blocks` consecutive blocks into blocks * blockElems floats.
void dequantizeBlocks(GgmlType t, const std::byte* data, std::int64_t blocks, float* out);

/// A quantized tensor's codes and block parameters, for comparing formats code by code.
struct GgufBlocks {
    std::string type;               // "Q4_K"
    int blockElems = 0;             // elements per block
    int subBlockElems = 0;          // elements per scale
    std::vector<std::int8_t> codes; // one per element, in file (row-major) order
    std::vector<float> scales;      // one per sub-block
    std::vector<float> offsets;     // one per sub-block; empty for types without a min
};

/// Throws FileError naming the file and tensor when it is missing or not of a quantized type.
GgufBlocks ggufBlocks(const GgufSource& source, const std::string& name);

} // namespace ql
