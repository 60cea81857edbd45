#include "quant/packing.h"

#include "base/error.h"

#include <string>

namespace ql {
namespace {

std::int64_t lastDim(const Shape& shape) {
    return shape.empty() ? 1 : shape.back();
}

std::int32_t signExtendNibble(std::uint32_t nibble) {
    return static_cast<std::int32_t>(nibble ^ 0x8u) - 8;
}

} // namespace

std::vector<std::uint8_t> packNibbles(const Codes& codes) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>((codes.size() + 1) / 2), 0);
    for (std::int64_t i = 0; i < codes.size(); ++i) {
        const auto nibble = static_cast<std::uint8_t>(codes.at(i) & 0xF);
        out[static_cast<std::size_t>(i / 2)] |= static_cast<std::uint8_t>(nibble << ((i % 2) * 4));
    }
    return out;
}

Codes unpackNibbles(const std::vector<std::uint8_t>& bytes, Target target, std::int64_t count) {
    if (static_cast<std::int64_t>(bytes.size()) * 2 < count)
        throw QuantError("packed data holds " + std::to_string(bytes.size() * 2) + " nibbles, " +
                         std::to_string(count) + " needed");
    Codes codes(target, count);
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint32_t nibble = (bytes[static_cast<std::size_t>(i / 2)] >> ((i % 2) * 4)) & 0xF;
        codes.set(i, target == Target::Int4 ? signExtendNibble(nibble) : static_cast<std::int32_t>(nibble));
    }
    return codes;
}

std::vector<std::int32_t> packInt32Words(const Codes& codes, const Shape& shape) {
    const std::int64_t last = lastDim(shape);
    if (last % 8 != 0)
        throw QuantError("int32 packing needs a last dimension divisible by 8 (got " + std::to_string(last) +
                         ")");
    std::vector<std::int32_t> words(static_cast<std::size_t>(codes.size() / 8), 0);
    for (std::int64_t i = 0; i < codes.size(); ++i) {
        const auto nibble = static_cast<std::uint32_t>(codes.at(i)) & 0xFu;
        auto& w = words[static_cast<std::size_t>(i / 8)];
        w = static_cast<std::int32_t>(static_cast<std::uint32_t>(w) | (nibble << (4 * (i % 8))));
    }
    return words;
}

Codes unpackInt32Words(const std::vector<std::int32_t>& words, const Shape& shape) {
    const std::int64_t count = elementCount(shape);
    if (static_cast<std::int64_t>(words.size()) * 8 != count)
        throw QuantError("expected " + std::to_string(count / 8) + " int32 words for shape " +
                         toString(shape));
    Codes codes(Target::Int4, count);
    for (std::int64_t i = 0; i < count; ++i) {
        const auto w = static_cast<std::uint32_t>(words[static_cast<std::size_t>(i / 8)]);
        codes.set(i, signExtendNibble((w >> (4 * (i % 8))) & 0xFu));
    }
    return codes;
}

std::vector<std::int32_t> packCompressedTensors(const Codes& codes, const Shape& shape) {
    const std::int64_t last = lastDim(shape);
    const std::int64_t rows = last == 0 ? 0 : codes.size() / last;
    const std::int64_t wordsPerRow = (last + 7) / 8;
    const int offset = codes.target() == Target::Int4 ? 8 : 0; // offset-binary for signed values
    std::vector<std::int32_t> words(static_cast<std::size_t>(rows * wordsPerRow), 0);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < last; ++c) {
            const auto v = static_cast<std::uint32_t>(codes.at(r * last + c) + offset) & 0xFu;
            auto& w = words[static_cast<std::size_t>(r * wordsPerRow + c / 8)];
            w = static_cast<std::int32_t>(static_cast<std::uint32_t>(w) | (v << (4 * (c % 8))));
        }
    return words;
}

Codes unpackCompressedTensors(const std::vector<std::int32_t>& words, const Shape& shape, Target target) {
    const std::int64_t last = lastDim(shape);
    const std::int64_t count = elementCount(shape);
    const std::int64_t rows = last == 0 ? 0 : count / last;
    const std::int64_t wordsPerRow = (last + 7) / 8;
    if (static_cast<std::int64_t>(words.size()) != rows * wordsPerRow)
        throw QuantError("expected " + std::to_string(rows * wordsPerRow) + " packed words for shape " +
                         toString(shape) + ", got " + std::to_string(words.size()));
    const int offset = target == Target::Int4 ? 8 : 0;
    Codes codes(target, count);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < last; ++c) {
            const auto w =
                static_cast<std::uint32_t>(words[static_cast<std::size_t>(r * wordsPerRow + c / 8)]);
            codes.set(r * last + c, static_cast<std::int32_t>((w >> (4 * (c % 8))) & 0xFu) - offset);
        }
    return codes;
}

} // namespace ql
