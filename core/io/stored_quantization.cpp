#include "io/stored_quantization.h"

#include "base/error.h"
#include "base/whole_number.h"
#include "io/gguf_blocks.h"
#include "io/gguf_source.h"
#include "quant/convention.h"
#include "quant/packing.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ql {
namespace {

// One rule per dimension with the trivial cases said one way: a block of 1 is Full, a block as long
// as the dimension (or a dimension of 1) is Shared.
DimMapping normalised(const DimMapping& m, std::int64_t size) {
    if (m.kind == DimMapping::Kind::Block && m.block == 1) return DimMapping::full();
    if (m.kind == DimMapping::Kind::Block && m.block >= size) return DimMapping::shared();
    if (m.kind == DimMapping::Kind::Full && size == 1) return DimMapping::shared();
    return m;
}

std::string layoutText(const Layout& l, const Shape& shape) {
    std::string out;
    for (std::size_t d = 0; d < l.dims.size(); ++d) {
        const DimMapping m = normalised(l.dims[d], shape[d]);
        out += d ? " x " : "";
        switch (m.kind) {
        case DimMapping::Kind::Full:
            out += "each";
            break;
        case DimMapping::Kind::Shared:
            out += "shared";
            break;
        case DimMapping::Kind::Block:
            out += "block " + std::to_string(m.block);
            break;
        case DimMapping::Kind::Ragged:
            out += "ragged";
            break;
        }
    }
    return "[" + out + "]";
}

// Symmetric files often store zero points of 0 anyway (onnxruntime always does): no zero point.
void dropZeroZeroPoints(StoredQuantization& q) {
    if (std::all_of(q.zeroPoints.begin(), q.zeroPoints.end(), [](std::int32_t z) { return z == 0; }))
        q.zeroPoints.clear();
}

std::optional<StoredQuantization> fromGguf(const GgufSource& gguf, const std::string& name,
                                           std::string* why) {
    const GgufTensorEntry& e = gguf.entry(name);
    const auto type = static_cast<GgmlType>(e.type);
    if (!isQuantized(type)) return std::nullopt;
    const GgmlTypeTraits tr = *ggmlTypeTraits(e.type);
    if (tr.subBlockElems != tr.blockElems) {
        if (why)
            *why = "codes not compared: gguf " + std::string(tr.name) +
                   " scales its sub-blocks by quantized sub-scales of a super-block";
        return std::nullopt;
    }
    GgufBlocks blocks = ggufBlocks(gguf, name);
    StoredQuantization q;
    q.format = "gguf " + blocks.type;
    const bool fiveBit = type == GgmlType::Q5_0 || type == GgmlType::Q5_1;
    q.bits = type == GgmlType::Q8_0 ? 8 : fiveBit ? 5 : 4;
    q.isSigned = !tr.hasOffset; // Q4_0 / Q5_0 / Q8_0 centre their codes; Q4_1 / Q5_1 add a min
    q.shape = e.shape;
    q.layout.dims.assign(e.shape.size(), DimMapping::full());
    q.layout.dims.back() = DimMapping::blocked(tr.blockElems); // blocks run along ne[0], the last axis
    q.codes.assign(blocks.codes.begin(), blocks.codes.end());
    q.scales = std::move(blocks.scales);
    q.offsets = std::move(blocks.offsets);
    return q;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// compressed-tensors (export_compressed_tensors.cpp): "W" int8 codes, or "W_packed" int32 words and
// "W_shape"; "W_scale" whose shape says the strategy; "W_zero_point" int8, or int32 words packed
// along the rows for 4-bit group and channel.
std::optional<StoredQuantization> fromCompressedTensors(const TensorSource& src, const std::string& name) {
    const bool packed = endsWith(name, ".weight_packed");
    const std::string w = packed ? name.substr(0, name.size() - 7) : name;
    const TensorInfo* codes = src.find(name);
    const TensorInfo* scale = src.find(w + "_scale");
    if (!endsWith(w, ".weight") || !codes || !scale) return std::nullopt;
    if (!packed && codes->dtype != DType::I8) return std::nullopt;
    const auto fail = [&](const std::string& reason) -> StoredQuantization {
        throw FileError(src.path() + ": tensor '" + name + "': compressed-tensors codes: " + reason);
    };
    StoredQuantization q;
    q.bits = packed ? 4 : 8;
    if (packed) {
        const TensorInfo* shape = src.find(w + "_shape");
        if (!shape || codes->dtype != DType::I32)
            return fail("packed codes need int32 words and " + w + "_shape");
        const std::vector<float> dims = src.load(shape->name).toFloatVector();
        if (dims.size() != 2 || !(dims[0] >= 0) || !(dims[1] >= 0) || dims[0] != std::floor(dims[0]) ||
            dims[1] != std::floor(dims[1]))
            return fail(w + "_shape is not [rows, columns]");
        // Eight 4-bit codes a word: a shape the words cannot hold is refused before it is used (a
        // crafted 1e30 would overflow the conversion and the element count).
        const double capacity = 8.0 * static_cast<double>(codes->byteSize / 4);
        if (dims[0] * dims[1] > capacity || dims[0] > capacity || dims[1] > capacity)
            return fail(w + "_shape [" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) +
                        "] holds more codes than the packed words");
        q.shape = {static_cast<std::int64_t>(dims[0]), static_cast<std::int64_t>(dims[1])};
        try {
            const Codes c = unpackCompressedTensors(storedIntegers(src.load(name)), q.shape, Target::Int4);
            for (std::int64_t i = 0; i < c.size(); ++i)
                q.codes.push_back(c.at(i));
        } catch (const QuantError& e) {
            return fail(e.what());
        }
    } else {
        q.shape = codes->shape;
        q.codes = storedIntegers(src.load(name));
    }
    const Shape& s = scale->shape;
    const std::int64_t rows = q.shape.empty() ? 1 : q.shape[0];
    const std::int64_t cols = q.shape.size() == 2 ? q.shape[1] : 1;
    std::string strategy;
    if (elementCount(s) == 1) {
        q.layout.dims.assign(q.shape.size(), DimMapping::shared());
        strategy = "tensor";
    } else if (q.shape.size() != 2 || s.size() != 2 || s[0] <= 0 || s[1] <= 0 || rows % s[0] || cols % s[1]) {
        return fail("scale " + toString(s) + " does not divide " + toString(q.shape) + " into equal groups");
    } else if (s[0] == rows) {
        q.layout.dims = {DimMapping::full(),
                         s[1] == 1 ? DimMapping::shared() : DimMapping::blocked(cols / s[1])};
        strategy = s[1] == 1 ? "channel" : "group " + std::to_string(cols / s[1]);
    } else {
        q.layout.dims = {DimMapping::blocked(rows / s[0]), DimMapping::blocked(cols / s[1])};
        strategy = "block " + std::to_string(rows / s[0]) + "x" + std::to_string(cols / s[1]);
    }
    q.scales = src.load(scale->name).toFloatVector();
    if (const TensorInfo* zp = src.find(w + "_zero_point")) {
        const std::vector<std::int32_t> z = storedIntegers(src.load(zp->name));
        if (zp->dtype == DType::I32 && packed && s.size() == 2) { // eight 4-bit zero points a word, down rows
            for (std::int64_t r = 0; r < s[0]; ++r)
                for (std::int64_t c = 0; c < s[1]; ++c) {
                    const std::size_t at = static_cast<std::size_t>((r / 8) * s[1] + c);
                    if (at >= z.size()) return fail(w + "_zero_point has too few packed words");
                    q.zeroPoints.push_back(static_cast<std::int32_t>(
                                               (static_cast<std::uint32_t>(z[at]) >> (4 * (r % 8))) & 0xFu) -
                                           8);
                }
        } else {
            q.zeroPoints = z;
        }
        if (q.zeroPoints.size() != q.scales.size())
            return fail(w + "_zero_point holds " + std::to_string(q.zeroPoints.size()) + " values for " +
                        std::to_string(q.scales.size()) + " scales");
    }
    if (static_cast<std::int64_t>(q.codes.size()) != elementCount(q.shape) ||
        static_cast<std::int64_t>(q.scales.size()) != elementCount(q.layout.scaleShape(q.shape)))
        return fail("codes or scales do not match the shape " + toString(q.shape));
    q.format = "compressed-tensors " + q.gridName() + " " + strategy;
    dropZeroZeroPoints(q);
    return q;
}

} // namespace

std::string StoredQuantization::gridName() const {
    return (isSigned ? "int" : "uint") + std::to_string(bits);
}

std::string StoredQuantization::gridDifference(const StoredQuantization& o) const {
    if (bits != o.bits || isSigned != o.isSigned)
        return "the code grids differ (" + gridName() + " and " + o.gridName() + ")";
    if (shape != o.shape) return "the shapes differ (" + toString(shape) + " and " + toString(o.shape) + ")";
    bool sameLayout = layout.dims.size() == o.layout.dims.size();
    for (std::size_t d = 0; sameLayout && d < layout.dims.size(); ++d)
        sameLayout = normalised(layout.dims[d], shape[d]) == normalised(o.layout.dims[d], shape[d]);
    if (!sameLayout)
        return "the scales are laid out differently (per dimension " + layoutText(layout, shape) + " and " +
               layoutText(o.layout, o.shape) + ")";
    if (zeroPoints.empty() != o.zeroPoints.empty())
        return "only " + (zeroPoints.empty() ? o.format : format) + " has zero points";
    if (offsets.empty() != o.offsets.empty())
        return "only " + (offsets.empty() ? o.format : format) + " adds a float offset (a min) per group";
    return {};
}

std::vector<float> StoredQuantization::dequantized() const {
    std::vector<float> out(codes.size());
    ScaleIndexer(layout, shape).forEach([&](std::int64_t i, std::int64_t g) {
        const auto k = static_cast<std::size_t>(g);
        const float q =
            static_cast<float>(codes[static_cast<std::size_t>(i)] - (zeroPoints.empty() ? 0 : zeroPoints[k]));
        out[static_cast<std::size_t>(i)] = q * scales[k] + (offsets.empty() ? 0.0f : offsets[k]);
    });
    return out;
}

StoredQuantization StoredQuantization::withRows(const std::vector<std::int64_t>& from) const {
    const std::int64_t rows = shape.empty() ? 0 : shape[0];
    if (static_cast<std::int64_t>(from.size()) != rows)
        throw QuantError("a row order of " + std::to_string(from.size()) + " rows for " + toString(shape));
    const DimMapping first = normalised(layout.dims[0], rows);
    if (first.kind != DimMapping::Kind::Full && first.kind != DimMapping::Kind::Shared)
        throw QuantError("rows cannot be reordered: groups of " + format + " span rows");
    StoredQuantization out = *this;
    const auto move = [&](const auto& in, auto& to) {
        const std::size_t per = in.size() / static_cast<std::size_t>(rows);
        for (std::size_t r = 0; r < from.size(); ++r)
            std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(from[r]) * per),
                        per, to.begin() + static_cast<std::ptrdiff_t>(r * per));
    };
    move(codes, out.codes);
    if (first.kind == DimMapping::Kind::Full) {
        move(scales, out.scales);
        if (!zeroPoints.empty()) move(zeroPoints, out.zeroPoints);
        if (!offsets.empty()) move(offsets, out.offsets);
    }
    return out;
}

std::vector<std::int32_t> storedIntegers(const Tensor& t) {
    if (t.dtype() == DType::I32) { // as words: a float holds 24 bits
        std::vector<std::int32_t> v(static_cast<std::size_t>(t.elementCount()));
        std::memcpy(v.data(), t.data(), v.size() * sizeof(std::int32_t));
        return v;
    }
    const std::vector<float> v = t.toFloatVector(); // 8- and 16-bit integers: exact
    return {v.begin(), v.end()};
}

std::optional<StoredQuantization> storedQuantization(const TensorSource& source, const std::string& name,
                                                     std::string* why) {
    if (!source.find(name)) return std::nullopt;
    return source.storedCodes(name, why);
}

std::optional<StoredQuantization> TensorSource::storedCodes(const std::string& name, std::string* why) const {
    (void)why;
    return fromCompressedTensors(*this, name);
}

std::optional<StoredQuantization> GgufSource::storedCodes(const std::string& name, std::string* why) const {
    return fromGguf(*this, name, why);
}

StoredQuantization storedQuantizationOf(const ResolvedSpec& plan, const QuantParams& params,
                                        const Codes& codes) {
    StoredQuantization q;
    switch (plan.codeTarget) {
    case Target::Int8:
    case Target::UInt8:
    case Target::Int4:
    case Target::UInt4:
    case Target::Int32:
        break;
    default:
        throw QuantError("codes of " + std::string(nameOf(plan.codeTarget)) +
                         " are floating point: only integer codes are compared");
    }
    if (plan.convention.scaleOp == ScaleOp::Multiply || plan.convention.scaleOp == ScaleOp::MultiplyTwice)
        throw QuantError(std::string(nameOf(plan.spec.preset)) +
                         " takes an inverse step (t = x * s), not the step files store");
    q.bits = plan.codeTarget == Target::Int32 ? 32 : isSubByte(plan.codeTarget) ? 4 : 8;
    q.isSigned = codeMin(plan.codeTarget) < 0;
    q.format = "quantlens " + std::string(nameOf(plan.spec.preset)) + " " + q.gridName() + " " +
               std::string(nameOf(plan.spec.scheme));
    q.shape = plan.shape;
    q.layout = plan.layout;
    q.codes.resize(static_cast<std::size_t>(codes.size()));
    for (std::int64_t i = 0; i < codes.size(); ++i)
        q.codes[static_cast<std::size_t>(i)] = codes.at(i);
    q.scales = params.scales;
    if (!params.zeroPoints.empty()) {
        for (std::size_t g = 0; g < q.scales.size(); ++g) {
            const float z = params.zeroPointOf(static_cast<std::int64_t>(g));
            // Checked before the conversion: a zero point from a file may be 1e30 or infinite.
            const auto whole = wholeNumber<std::int32_t>(z);
            if (!whole)
                throw QuantError("zero point " + std::to_string(z) +
                                 (z == std::nearbyint(z)
                                      ? " is beyond the 32-bit integers codes are compared in"
                                      : " is a float offset, not an integer"));
            q.zeroPoints.push_back(*whole);
        }
    }
    dropZeroZeroPoints(q);
    return q;
}

} // namespace ql
