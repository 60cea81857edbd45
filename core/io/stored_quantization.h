#pragma once
// A quantized tensor as a file stores it: integer codes, scales per group, zero points and the grid
// they lie on. Sources that hold quantized tensors expose them through storedQuantization(): GGUF's
// simple block types, ONNX QDQ weights and compressed-tensors exports (QuantLens's own included),
// so that two files, or a file and a re-quantization, can be compared code by code.
#include "quant/layout.h"
#include "tensor/shape.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ql {

class Tensor;
class TensorSource;
struct ResolvedSpec;
struct QuantParams;
class Codes;

struct StoredQuantization {
    std::string format; // "gguf Q8_0", "onnx int8 per-axis 0", "compressed-tensors int4 group 128"
    int bits = 8;       // the code grid: [-2^(bits-1), 2^(bits-1)) when signed, [0, 2^bits) when not
    bool isSigned = true;
    Shape shape;                          // the tensor's logical (row-major) shape
    Layout layout;                        // which scale each element uses; scales run in ScaleIndexer's order
    std::vector<std::int32_t> codes;      // one per element, row-major
    std::vector<float> scales;            // one per group: x̂ = (code - zero point) * scale + offset
    std::vector<std::int32_t> zeroPoints; // one per group; empty: none (or all zero)
    std::vector<float> offsets;           // a float offset per group (GGUF's Q4_1 / Q5_1 min); empty: none

    /// Why `other`'s codes cannot be compared one for one with these (empty: they can): the bit
    /// width, signedness, shape, scale layout, or the zero-point / offset kind differ.
    std::string gridDifference(const StoredQuantization& other) const;
    /// "int8", "uint4", "int5": the grid in words.
    std::string gridName() const;
    /// The values the codes stand for, (code - zero point) * scale + offset in f32, row-major.
    std::vector<float> dequantized() const;
    /// Moves rows (axis 0): row r of the result is row `from[r]` of this, with its scales when the
    /// layout gives each row its own. Throws QuantError when groups span rows.
    StoredQuantization withRows(const std::vector<std::int64_t>& from) const;
};

/// The stored codes of `name`, or nullopt when the tensor is not stored quantized. When it is but its
/// codes cannot be exposed (GGUF's K-quants, float codes), nullopt and `why` says so. Throws
/// FileError naming the file, the tensor and the reason for inconsistent parts (a zero point of the
/// wrong shape, packed words that do not fit).
std::optional<StoredQuantization> storedQuantization(const TensorSource& source, const std::string& name,
                                                     std::string* why = nullptr);

/// A QuantLens run's codes in the same terms (format "quantlens <preset> <dtype> <scheme>"). Throws
/// QuantError for float targets and for scales the operator does not multiply by (inverse steps).
StoredQuantization storedQuantizationOf(const ResolvedSpec& plan, const QuantParams& params,
                                        const Codes& codes);

/// Internal to core/io: integer tensor values (int32 words bit for bit).
std::vector<std::int32_t> storedIntegers(const Tensor& t);

} // namespace ql
