#include "io/gguf_blocks.h"

#include "base/error.h"
#include "io/gguf_source.h"
#include "tensor/float_formats.h"

#include <array>
#include <cstring>

namespace ql {

namespace {

std::uint8_t byteAt(const std::byte* p, int i) {
    return std::to_integer<std::uint8_t>(p[i]);
}

float halfAt(const std::byte* p, int i) {
    return halfToFloat(static_cast<std::uint16_t>(byteAt(p, i) | (byteAt(p, i + 1) << 8)));
}

std::uint32_t u32At(const std::byte* p, int i) {
    return static_cast<std::uint32_t>(byteAt(p, i)) | static_cast<std::uint32_t>(byteAt(p, i + 1)) << 8 |
           static_cast<std::uint32_t>(byteAt(p, i + 2)) << 16 |
           static_cast<std::uint32_t>(byteAt(p, i + 3)) << 24;
}

// Legacy 32-element blocks. Layouts: Q4_0 {d, qs[16]}, Q4_1 {d, m, qs[16]}, Q5_0 {d, qh[4], qs[16]},
// Q5_1 {d, m, qh[4], qs[16]}, Q8_0 {d, qs[32]}. Nibble j holds element j (low) and j + 16 (high);
// bit j of qh is the fifth bit of element j.
void legacy(GgmlType t, const std::byte* b, std::int8_t* codes, float* scales, float* offsets) {
    scales[0] = halfAt(b, 0);
    if (t == GgmlType::Q8_0) {
        for (int j = 0; j < 32; ++j)
            codes[j] = static_cast<std::int8_t>(byteAt(b, 2 + j));
        return;
    }
    const bool withMin = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
    const bool fiveBit = t == GgmlType::Q5_0 || t == GgmlType::Q5_1;
    if (withMin) offsets[0] = halfAt(b, 2);
    int at = withMin ? 4 : 2;
    const std::uint32_t qh = fiveBit ? u32At(b, at) : 0;
    if (fiveBit) at += 4;
    // Symmetric types centre their codes (Q4_0 subtracts 8, Q5_0 subtracts 16).
    const int centre = withMin ? 0 : (fiveBit ? 16 : 8);
    for (int j = 0; j < 16; ++j) {
        const int q = byteAt(b, at + j);
        const int hi0 = fiveBit ? static_cast<int>((qh >> j) & 1u) << 4 : 0;
        const int hi1 = fiveBit ? static_cast<int>((qh >> (j + 16)) & 1u) << 4 : 0;
        codes[j] = static_cast<std::int8_t>(((q & 15) | hi0) - centre);
        codes[j + 16] = static_cast<std::int8_t>(((q >> 4) | hi1) - centre);
    }
}

// Q2_K {scales[16], qs[64], d, dmin} and Q3_K {hmask[32], qs[64], scales[12], d}: 16 sub-blocks of
// 16. Each 128-element half uses 32 bytes of qs; its four 32-element groups take successive 2-bit
// fields (shift 0, 2, 4, 6) of bytes [0, 16) then [16, 32).
void twoBitPlanes(GgmlType t, const std::byte* b, std::int8_t* codes, float* scales, float* offsets) {
    const bool q3 = t == GgmlType::Q3_K;
    const int qsAt = q3 ? 32 : 16;
    const float d = q3 ? halfAt(b, 108) : halfAt(b, 80);
    const float dmin = q3 ? 0.0f : halfAt(b, 82);
    for (int s = 0; s < 16; ++s) {
        if (q3) {
            // 6-bit scales: low nibbles in bytes 0..7 (low half first), top two bits in bytes 8..11.
            const int low = s < 8 ? byteAt(b, 96 + s) & 15 : byteAt(b, 96 + s - 8) >> 4;
            const int high = (byteAt(b, 96 + 8 + s % 4) >> (2 * (s / 4))) & 3;
            scales[s] = d * static_cast<float>((low | high << 4) - 32);
        } else {
            const int sc = byteAt(b, s);
            scales[s] = d * static_cast<float>(sc & 15);
            offsets[s] = -(dmin * static_cast<float>(sc >> 4));
        }
    }
    for (int e = 0; e < 256; ++e) {
        const int n = e / 128, r = e % 128, j = r / 32, h = (r % 32) / 16, l = r % 16;
        int q = (byteAt(b, qsAt + n * 32 + h * 16 + l) >> (2 * j)) & 3;
        if (q3 && !(byteAt(b, h * 16 + l) & (1 << (n * 4 + j)))) q -= 4; // a clear hmask bit lowers by 4
        codes[e] = static_cast<std::int8_t>(q);
    }
}

// Q4_K {d, dmin, scales[12], qs[128]} and Q5_K {d, dmin, scales[12], qh[32], qs[128]}: 8 sub-blocks
// of 32 with 6-bit scales and mins packed in 12 bytes. Each 64 elements use 32 bytes of qs, low
// nibbles first; Q5_K's fifth bits are bit 2j (low nibbles) and 2j + 1 (high) of qh[l].
void nibblePairs(GgmlType t, const std::byte* b, std::int8_t* codes, float* scales, float* offsets) {
    const bool q5 = t == GgmlType::Q5_K;
    const float d = halfAt(b, 0), dmin = halfAt(b, 2);
    const std::byte* packed = b + 4;
    for (int s = 0; s < 8; ++s) {
        int sc = 0, m = 0;
        if (s < 4) {
            sc = byteAt(packed, s) & 63;
            m = byteAt(packed, s + 4) & 63;
        } else {
            sc = (byteAt(packed, s + 4) & 15) | (byteAt(packed, s - 4) >> 6) << 4;
            m = (byteAt(packed, s + 4) >> 4) | (byteAt(packed, s) >> 6) << 4;
        }
        scales[s] = d * static_cast<float>(sc);
        offsets[s] = -(dmin * static_cast<float>(m));
    }
    const int qsAt = q5 ? 48 : 16;
    for (int e = 0; e < 256; ++e) {
        const int j = e / 64, h = (e % 64) / 32, l = e % 32;
        const int byte = byteAt(b, qsAt + j * 32 + l);
        int q = h ? byte >> 4 : byte & 15;
        if (q5 && (byteAt(b, 16 + l) & (1 << (2 * j + h)))) q += 16;
        codes[e] = static_cast<std::int8_t>(q);
    }
}

// Q6_K {ql[128], qh[64], scales[16] (int8), d}: 16 sub-blocks of 16. Per 128 elements, 64 bytes
// of ql and 32 of qh: element k*32 + l takes a nibble of ql[l + 32 * (k % 2)] (low for k < 2)
// and bits 2k, 2k+1 of qh[l]; codes are centred by 32.
void sixBit(const std::byte* b, std::int8_t* codes, float* scales) {
    const float d = halfAt(b, 208);
    for (int s = 0; s < 16; ++s)
        scales[s] = d * static_cast<float>(static_cast<std::int8_t>(byteAt(b, 192 + s)));
    for (int e = 0; e < 256; ++e) {
        const int n = e / 128, k = (e % 128) / 32, l = e % 32;
        const int lo = byteAt(b, n * 64 + l + 32 * (k % 2));
        const int nibble = k < 2 ? lo & 15 : lo >> 4;
        const int high = (byteAt(b, 128 + n * 32 + l) >> (2 * k)) & 3;
        codes[e] = static_cast<std::int8_t>((nibble | high << 4) - 32);
    }
}

} // namespace

std::optional<GgmlTypeTraits> ggmlTypeTraits(std::uint32_t id) {
    switch (static_cast<GgmlType>(id)) {
    case GgmlType::F32:
        return GgmlTypeTraits{"F32", 1, 4, 0, false};
    case GgmlType::F16:
        return GgmlTypeTraits{"F16", 1, 2, 0, false};
    case GgmlType::BF16:
        return GgmlTypeTraits{"BF16", 1, 2, 0, false};
    case GgmlType::Q4_0:
        return GgmlTypeTraits{"Q4_0", 32, 18, 32, false};
    case GgmlType::Q4_1:
        return GgmlTypeTraits{"Q4_1", 32, 20, 32, true};
    case GgmlType::Q5_0:
        return GgmlTypeTraits{"Q5_0", 32, 22, 32, false};
    case GgmlType::Q5_1:
        return GgmlTypeTraits{"Q5_1", 32, 24, 32, true};
    case GgmlType::Q8_0:
        return GgmlTypeTraits{"Q8_0", 32, 34, 32, false};
    case GgmlType::Q2_K:
        return GgmlTypeTraits{"Q2_K", 256, 84, 16, true};
    case GgmlType::Q3_K:
        return GgmlTypeTraits{"Q3_K", 256, 110, 16, false};
    case GgmlType::Q4_K:
        return GgmlTypeTraits{"Q4_K", 256, 144, 32, true};
    case GgmlType::Q5_K:
        return GgmlTypeTraits{"Q5_K", 256, 176, 32, true};
    case GgmlType::Q6_K:
        return GgmlTypeTraits{"Q6_K", 256, 210, 16, false};
    }
    return std::nullopt;
}

std::string ggmlTypeName(std::uint32_t id) {
    if (const auto traits = ggmlTypeTraits(id)) return std::string(traits->name);
    // ggml.h's other types, which QuantLens does not decode (4, 5 and 31-33, 36-38 were removed).
    static constexpr std::pair<std::uint32_t, const char*> kOthers[] = {
        {9, "Q8_1"},   {15, "Q8_K"},   {16, "IQ2_XXS"}, {17, "IQ2_XS"}, {18, "IQ3_XXS"},
        {19, "IQ1_S"}, {20, "IQ4_NL"}, {21, "IQ3_S"},   {22, "IQ2_S"},  {23, "IQ4_XS"},
        {24, "I8"},    {25, "I16"},    {26, "I32"},     {27, "I64"},    {28, "F64"},
        {29, "IQ1_M"}, {34, "TQ1_0"},  {35, "TQ2_0"},   {39, "MXFP4"}};
    for (const auto& [known, name] : kOthers)
        if (known == id) return name;
    return "id " + std::to_string(id);
}

bool isQuantized(GgmlType t) {
    return t != GgmlType::F32 && t != GgmlType::F16 && t != GgmlType::BF16;
}

void decodeBlock(GgmlType t, const std::byte* block, std::int8_t* codes, float* scales, float* offsets) {
    switch (t) {
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
        legacy(t, block, codes, scales, offsets);
        return;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
        twoBitPlanes(t, block, codes, scales, offsets);
        return;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
        nibblePairs(t, block, codes, scales, offsets);
        return;
    case GgmlType::Q6_K:
        sixBit(block, codes, scales);
        return;
    default:
        break;
    }
    throw FileError("not a quantized ggml type: " + std::to_string(static_cast<std::uint32_t>(t)));
}

void dequantizeBlocks(GgmlType t, const std::byte* data, std::int64_t blocks, float* out) {
    const GgmlTypeTraits tr = *ggmlTypeTraits(static_cast<std::uint32_t>(t));
    std::array<std::int8_t, 256> codes{};
    std::array<float, 16> scales{}, offsets{};
    for (std::int64_t i = 0; i < blocks; ++i) {
        decodeBlock(t, data + i * tr.blockBytes, codes.data(), scales.data(), offsets.data());
        float* y = out + i * tr.blockElems;
        // No "+ 0" for types without a min: it would turn ggml's -0 results into +0.
        for (int e = 0; e < tr.blockElems; ++e) {
            const float v = scales[static_cast<std::size_t>(e / tr.subBlockElems)] *
                            static_cast<float>(codes[static_cast<std::size_t>(e)]);
            y[e] = tr.hasOffset ? v + offsets[static_cast<std::size_t>(e / tr.subBlockElems)] : v;
        }
    }
}

GgufBlocks ggufBlocks(const GgufSource& source, const std::string& name) {
    const GgufTensorEntry& e = source.entry(name);
    const GgmlType t = static_cast<GgmlType>(e.type);
    const GgmlTypeTraits tr = *ggmlTypeTraits(e.type);
    if (!isQuantized(t))
        throw FileError(source.path() + ": tensor '" + name + "': " + std::string(tr.name) +
                        " is not a block-quantized type");
    const std::int64_t blocks = e.elements / tr.blockElems;
    const int subs = tr.blockElems / tr.subBlockElems;
    GgufBlocks out;
    out.type = tr.name;
    out.blockElems = tr.blockElems;
    out.subBlockElems = tr.subBlockElems;
    out.codes.resize(static_cast<std::size_t>(e.elements));
    out.scales.resize(static_cast<std::size_t>(blocks * subs));
    out.offsets.resize(tr.hasOffset ? out.scales.size() : 0);
    std::array<float, 16> unused{};
    const std::byte* data = source.tensorData(e);
    for (std::int64_t i = 0; i < blocks; ++i)
        decodeBlock(t, data + i * tr.blockBytes, out.codes.data() + i * tr.blockElems,
                    out.scales.data() + i * subs,
                    tr.hasOffset ? out.offsets.data() + i * subs : unused.data());
    return out;
}

} // namespace ql
