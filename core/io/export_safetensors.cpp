// exportSafetensors: quantized codes, scales and zero points in compressed-tensors' exact layout
// (export_compressed_tensors.h) or as the operator emits them, with the full
// QuantLens plan in __metadata__ so a file can be re-analysed.
#include "base/error.h"
#include "io/atomic_file.h"
#include "io/export.h"
#include "io/export_compressed_tensors.h"
#include "io/export_tensors.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "quant/packing.h"
#include "quant/spec_json.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace ql {

ExportNames exportNames(const std::string& name, bool packed) {
    ExportNames n;
    n.codes = packed ? name + "_packed" : name;
    if (packed) n.shape = name + "_shape";
    n.scale = name + "_scale";
    n.zeroPoint = name + "_zero_point";
    n.globalScale = name + "_global_scale";
    return n;
}

std::span<const ExportLayoutInfo> exportLayouts() {
    static constexpr ExportLayoutInfo table[] = {
        {ExportLayout::CompressedTensors, "compressed-tensors",
         "a checkpoint vLLM and transformers load: the library's tensor layout plus config.json with "
         "quantization_config beside the file; tensors whose arithmetic it cannot express are refused"},
        {ExportLayout::Native, "native",
         "what the operator emits: torch quint4x2 bytes, Ascend int32 words, raw fp codes, under the "
         "tensors' own names whatever they are"},
    };
    return table;
}

const ExportLayoutInfo& exportLayoutInfo(ExportLayout layout) {
    for (const ExportLayoutInfo& info : exportLayouts())
        if (info.layout == layout) return info;
    return exportLayouts().front();
}

namespace {

std::string_view layoutName(ExportLayout layout) {
    return exportLayoutInfo(layout).name;
}

template <typename T> Tensor vectorTensor(DType dtype, Shape shape, const std::vector<T>& values) {
    Tensor t(dtype, std::move(shape));
    if (!values.empty()) std::memcpy(t.mutableData(), values.data(), values.size() * sizeof(T));
    return t;
}

// Codes packed for transport, and how: compressed-tensors packs 4-bit integers offset-binary eight per
// int32 and FP4 two per byte along each row; native writes the operator's own packing (Convention).
struct Payload {
    Tensor tensor;
    std::string packing = "none";
};

Payload packedPayload(const QuantizedTensor& q, ExportLayout layout, const std::string& file) {
    const Target t = q.codes.target();
    Shape shape = q.plan.shape.empty() ? Shape{1} : q.plan.shape;
    if (layout == ExportLayout::CompressedTensors) {
        if (t == Target::Fp4E2M1) return {packFp4Rows(q.codes, shape), "fp4-two-per-byte-rows"};
        const auto words = packCompressedTensors(q.codes, q.plan.shape);
        shape.back() = (shape.back() + 7) / 8;
        if (static_cast<std::int64_t>(words.size()) != elementCount(shape))
            throw FileError(file + ": tensor '" + q.name + "': packed word count does not match " +
                            toString(shape));
        return {vectorTensor(DType::I32, shape, words), "compressed-tensors-int32"};
    }
    if (q.plan.convention.packing == Packing::Int32Words) {
        const auto words = packInt32Words(q.codes, q.plan.shape);
        return {vectorTensor(DType::I32, q.plan.packedShape(), words), "int32-words"};
    }
    const auto bytes = packNibbles(q.codes); // torch quint4x2 and FP4: two per byte, low nibble first
    return {vectorTensor(DType::U8, Shape{static_cast<std::int64_t>(bytes.size())}, bytes), "nibbles-flat"};
    // (== plan.packedShape() for NibblesFlat; FP4 without a packing convention is flattened the same way)
}

bool isPacked(const QuantizedTensor& q, ExportLayout layout) {
    const Target t = q.codes.target();
    if (layout == ExportLayout::CompressedTensors)
        return t == Target::Int4 || t == Target::UInt4 || t == Target::Fp4E2M1;
    return q.plan.convention.packing != Packing::None || t == Target::Fp4E2M1;
}

} // namespace

void exportSafetensors(const std::string& path, const std::vector<QuantizedTensor>& tensors,
                       ExportLayout layout, const std::string& sourcePath, const ExportExtras& extras) {
    refuseOverwritingSource(path, sourcePath); // before any work, so the message comes first
    std::vector<NamedTensor> out;
    nlohmann::json described = nlohmann::json::array();
    if (layout == ExportLayout::CompressedTensors) {
        // Every tensor is checked before any is converted, so a refusal comes before the work.
        std::vector<CompressedTensorsArgs> args;
        for (const auto& q : tensors) {
            checkQuantizedTensor(q, path);
            args.push_back(compressedTensorsArgs(q, path));
        }
        checkCompressedTensorsNames(tensors, extras, path);
        // Scales are stored in the source weight's dtype, as compressed-tensors does.
        std::unique_ptr<TensorSource> source;
        if (!sourcePath.empty()) source = openTensorSource(sourcePath);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const QuantizedTensor& q = tensors[i];
            const TensorInfo* info = source ? source->find(q.name) : nullptr;
            nlohmann::json d;
            d["name"] = q.name;
            for (auto& t : compressedTensorsTensors(q, args[i], info ? info->dtype : DType::F32, path, d))
                out.push_back(std::move(t));
            d["plan"] = toJson(q.plan);
            described.push_back(std::move(d));
        }
    }
    const std::vector<QuantizedTensor> none;
    for (const auto& q : layout == ExportLayout::Native ? tensors : none) {
        checkQuantizedTensor(q, path);
        const bool packed = isPacked(q, layout);
        const ExportNames names = exportNames(q.name, packed);
        nlohmann::json d;
        d["name"] = q.name;
        d["codes"] = names.codes;
        if (packed) {
            Payload p = packedPayload(q, layout, path);
            d["packing"] = p.packing;
            out.push_back({names.codes, std::move(p.tensor)});
            std::vector<std::int64_t> shape = q.plan.shape;
            out.push_back({names.shape,
                           vectorTensor(DType::I64, Shape{static_cast<std::int64_t>(shape.size())}, shape)});
            d["shape"] = names.shape;
        } else {
            d["packing"] = "none";
            out.push_back({names.codes, codesTensor(q)});
        }
        ScaleTensors s = scaleTensors(q, path);
        d["scale"] = names.scale;
        d["scale_encoding"] = s.encoding;
        out.push_back({names.scale, std::move(s.scale)});
        if (s.hasZeroPoint()) {
            d["zero_point"] = names.zeroPoint;
            out.push_back({names.zeroPoint, std::move(s.zeroPoint)});
        }
        if (s.hasGlobalScale()) {
            d["global_scale"] = names.globalScale;
            out.push_back({names.globalScale, std::move(s.globalScale)});
        }
        d["plan"] = toJson(q.plan);
        described.push_back(std::move(d));
    }
    nlohmann::json kept = nlohmann::json::array(), failed = nlohmann::json::array();
    for (const auto& k : extras.kept) {
        kept.push_back(k.name);
        out.push_back(k);
    }
    for (const auto& [name, reason] : extras.failed)
        failed.push_back({{"name", name}, {"reason", reason}});
    const nlohmann::json meta = {{"format", "quantlens-export"}, {"version", 1},
                                 {"layout", layoutName(layout)}, {"tensors", std::move(described)},
                                 {"kept", std::move(kept)},      {"failed", std::move(failed)}};
    // "format": "pt" is what Hugging Face loaders expect to find in __metadata__.
    writeSafetensors(path, out, {{"format", "pt"}, {"quantlens", meta.dump()}}, sourcePath);
}

} // namespace ql
