// Reading QuantLens exports back (export_reader.h). The writers are export_safetensors.cpp (both
// layouts; the "quantlens" __metadata__ entry lists each tensor with its parts, packing and plan),
// export_compressed_tensors.cpp (its offsets, packings and reciprocal global scale) and export_hdf5.cpp
// (one group per tensor: codes, scale, zero_point, global_scale, and the plan as the "spec" attribute).
#include "io/export_reader.h"

#include "base/error.h"
#include "io/stored_quantization.h"
#include "io/untrusted_json.h"
#include "quant/calibration_search.h"
#include "quant/packing.h"
#include "quant/reference.h"
#include "quant/spec_json.h"

#include <cmath>
#include <cstring>

namespace ql {
namespace {

using nlohmann::json;

constexpr int kMaxMetadataDepth = 64;
constexpr std::uint64_t kMaxMetadataTreeBytes = 256ULL << 20;

json parseMetadata(const std::string& text, const std::string& file, const std::string& what) {
    checkJsonShape(text, file, what, kMaxMetadataDepth, kMaxMetadataTreeBytes);
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw FileError(file + ": " + what + " is not a JSON object");
    return j;
}

bool isExport(const json& meta) {
    return meta.value("format", std::string()) == "quantlens-export";
}

std::string text(const json& d, const char* key) {
    const auto it = d.find(key);
    return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
}

[[noreturn]] void fail(const TensorSource& s, const std::string& name, const std::string& reason) {
    throw FileError(s.path() + ": exported tensor '" + name + "': " + reason);
}

// One code per element from an unpacked tensor: integers as their values less `offset`, 8-bit float
// and FP4 codes as their bytes.
Codes unpackedCodes(const TensorSource& s, const std::string& name, const Tensor& t, Target target,
                    std::int64_t offset) {
    Codes c(target, t.elementCount());
    if (isFloatTarget(target)) {
        if (t.dtype() != DType::U8 && t.dtype() != DType::F8E4M3 && t.dtype() != DType::F8E5M2)
            fail(s, name, "float codes stored as " + std::string(nameOf(t.dtype())));
        std::memcpy(c.data(), t.data(), static_cast<std::size_t>(t.elementCount()));
        return c;
    }
    const std::vector<std::int32_t> v = storedIntegers(t);
    for (std::size_t i = 0; i < v.size(); ++i)
        c.set(static_cast<std::int64_t>(i), static_cast<std::int32_t>(v[i] - offset));
    return c;
}

std::vector<std::uint8_t> bytesOf(const Tensor& t) {
    const auto* p = static_cast<const std::uint8_t*>(static_cast<const void*>(t.data()));
    return {p, p + t.byteSize()};
}

Codes fp4Rows(const TensorSource& s, const std::string& name, const Tensor& t, const Shape& shape) {
    const std::int64_t cols = shape.empty() ? 1 : shape.back();
    const std::int64_t rows = cols == 0 ? 0 : elementCount(shape) / cols;
    const std::int64_t packedCols = (cols + 1) / 2;
    if (t.byteSize() != static_cast<std::uint64_t>(rows * packedCols))
        fail(s, name, "FP4 codes of " + std::to_string(t.byteSize()) + " bytes for " + toString(shape));
    const auto* p = static_cast<const std::uint8_t*>(static_cast<const void*>(t.data()));
    Codes c(Target::Fp4E2M1, rows * cols);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t k = 0; k < cols; ++k) {
            const std::uint8_t b = p[r * packedCols + k / 2];
            c.set(r * cols + k, k % 2 ? b >> 4 : b & 0x0F);
        }
    return c;
}

ResolvedSpec planOf(const TensorSource& s, const std::string& name, const json& j) {
    try {
        if (!j.is_object() || !j.contains("shape")) fail(s, name, "its plan has no shape");
        return planFromJson(j); // through the view it was quantized in, where it records one
    } catch (const QuantError& e) {
        fail(s, name, std::string("its plan: ") + e.what());
    } catch (const json::exception& e) {
        fail(s, name, std::string("its plan: ") + e.what());
    }
}

} // namespace

std::vector<ExportedEntry> exportedEntries(const TensorSource& source) {
    std::vector<ExportedEntry> out;
    const auto meta = source.textAttribute("", "quantlens");
    if (!meta) return out;
    const json m = parseMetadata(*meta, source.path(), "the quantlens metadata");
    if (!isExport(m)) return out;
    const auto tensors = m.find("tensors");
    if (tensors != m.end()) { // safetensors: every tensor described in the file's metadata
        if (!tensors->is_array())
            throw FileError(source.path() + ": quantlens metadata: \"tensors\" is not a list");
        for (const json& d : *tensors) {
            if (!d.is_object() || text(d, "name").empty() || text(d, "codes").empty())
                throw FileError(source.path() + ": quantlens metadata: a tensor without a name or codes");
            ExportedEntry e{text(d, "name"), {}, d, {}};
            for (const char* part : {"codes", "shape", "scale", "zero_point", "global_scale"})
                if (const std::string p = text(d, part); !p.empty()) e.parts.push_back(p);
            out.push_back(std::move(e));
        }
        return out;
    }
    // HDF5: a group per tensor, found by its codes dataset and described by its attributes.
    const std::string codesSuffix = "/codes";
    for (const TensorInfo& t : source.tensors()) {
        if (t.name.size() <= codesSuffix.size() ||
            t.name.compare(t.name.size() - codesSuffix.size(), codesSuffix.size(), codesSuffix) != 0)
            continue;
        const std::string group = t.name.substr(0, t.name.size() - codesSuffix.size());
        const auto spec = source.textAttribute(group, "spec");
        if (!spec || !source.find(group + "/scale")) continue;
        json d = {{"name", source.textAttribute(group, "name").value_or(group)},
                  {"codes", t.name},
                  {"scale", group + "/scale"},
                  {"scale_encoding", source.textAttribute(group, "scale_encoding").value_or("f32")},
                  {"packing", "none"},
                  {"plan", parseMetadata(*spec, source.path(), "the spec of group '" + group + "'")}};
        for (const char* part : {"zero_point", "global_scale"})
            if (source.find(group + "/" + part)) d[part] = group + "/" + part;
        ExportedEntry e{d["name"].get<std::string>(), {}, d, group};
        for (const char* part : {"codes", "scale", "zero_point", "global_scale"})
            if (const std::string p = text(d, part); !p.empty()) e.parts.push_back(p);
        out.push_back(std::move(e));
    }
    return out;
}

QuantizedTensor readExported(const TensorSource& s, const ExportedEntry& e) {
    const json& d = e.description;
    QuantizedTensor q;
    q.name = e.name;
    q.plan = planOf(s, e.name, d.contains("plan") ? d["plan"] : json());
    const ResolvedSpec& p = q.plan;
    const Target target = p.codeTarget;
    const std::int64_t count = elementCount(p.shape);
    const std::int64_t offset = d.value("codes_offset", std::int64_t{0});
    const std::string packing = text(d, "packing");
    const auto load = [&](const std::string& part) {
        if (!s.find(part)) fail(s, e.name, "its part '" + part + "' is not in the file");
        return s.load(part);
    };

    // Codes.
    const Tensor codes = load(text(d, "codes"));
    try {
        if (packing == "none" || packing.empty())
            q.codes = unpackedCodes(s, e.name, codes, target, offset);
        else if (packing == "compressed-tensors-int32")
            q.codes = unpackCompressedTensors(storedIntegers(codes), p.shape, target);
        else if (packing == "fp4-two-per-byte-rows")
            q.codes = fp4Rows(s, e.name, codes, p.shape);
        else if (packing == "int32-words")
            q.codes = unpackInt32Words(storedIntegers(codes), p.shape);
        else if (packing == "nibbles-flat")
            q.codes = unpackNibbles(bytesOf(codes), target, count);
        else
            fail(s, e.name, "unknown packing '" + packing + "'");
    } catch (const QuantError& err) {
        fail(s, e.name, std::string("its codes: ") + err.what());
    }
    if (q.codes.size() != count || q.codes.target() != target)
        fail(s, e.name, std::to_string(q.codes.size()) + " codes for " + toString(p.shape));

    // Scales: the step (or inverse step) as stored, or the block-scale codes they are rebuilt from.
    const std::string encoding = text(d, "scale_encoding");
    const Tensor scale = load(text(d, "scale"));
    const std::int64_t groups = elementCount(p.scaleShape.empty() ? Shape{1} : p.scaleShape);
    if (encoding == "e4m3" || encoding == "e8m0") {
        q.params.scaleCodes = bytesOf(scale);
        if (encoding == "e4m3") {
            const std::string g = text(d, "global_scale");
            if (g.empty()) fail(s, e.name, "NVFP4 block scales without a global scale");
            const std::vector<float> gv = load(g).toFloatVector();
            if (gv.size() != 1) fail(s, e.name, "its global scale is not one value");
            // compressed-tensors stores 1/s_g; the export records s_g itself beside it, exactly.
            const bool reciprocal = text(d, "global_scale_encoding") == "reciprocal";
            q.params.tensorScale = d.contains("tensor_scale") ? d["tensor_scale"].get<float>()
                                   : reciprocal ? static_cast<float>(1.0 / static_cast<double>(gv[0]))
                                                : gv[0];
        }
        for (std::uint8_t c : q.params.scaleCodes)
            q.params.scales.push_back(blockScale(p, c, q.params.tensorScale));
    } else {
        q.params.scales = scale.toFloatVector();
    }
    if (static_cast<std::int64_t>(q.params.scales.size()) != groups)
        fail(s, e.name,
             std::to_string(q.params.scales.size()) + " scales for the scale shape " +
                 toString(p.scaleShape));

    // Zero points: one per scale (or one for all), shifted back and unpacked where the layout packs them.
    if (const std::string zpName = text(d, "zero_point"); !zpName.empty()) {
        const Tensor zp = load(zpName);
        if (text(d, "zero_point_packing") == "compressed-tensors-int32-rows") {
            const std::vector<std::int32_t> words = storedIntegers(zp);
            const Shape& ss = p.scaleShape;
            const std::int64_t rows = ss.size() == 2 ? ss[0] : 1, cols = ss.size() == 2 ? ss[1] : groups;
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < cols; ++c) {
                    const auto at = static_cast<std::size_t>((r / 8) * cols + c);
                    if (at >= words.size()) fail(s, e.name, "too few packed zero-point words");
                    const auto nibble = static_cast<std::int32_t>(
                        (static_cast<std::uint32_t>(words[at]) >> (4 * (r % 8))) & 0xFu);
                    q.params.zeroPoints.push_back(static_cast<float>(nibble - 8 - offset));
                }
        } else if (zp.dtype() == DType::F32 || zp.dtype() == DType::F16 || zp.dtype() == DType::BF16) {
            q.params.zeroPoints = zp.toFloatVector();
        } else {
            for (const std::int32_t z : storedIntegers(zp))
                q.params.zeroPoints.push_back(static_cast<float>(z - offset));
        }
        const auto n = static_cast<std::int64_t>(q.params.zeroPoints.size());
        if (n != groups && n != 1)
            fail(s, e.name, std::to_string(n) + " zero points for " + std::to_string(groups) + " scales");
    }
    return q;
}

std::vector<float> exportedValues(const QuantizedTensor& q) {
    return dequantizeReference(q.plan, q.params, q.codes);
}

} // namespace ql
