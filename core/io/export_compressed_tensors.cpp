// compressed-tensors layouts, written from the library's own sources: neuralmagic/compressed-tensors
// 0.12.2 (+23 commits, 52792be0), compressors/quantized_compressors/{naive_quantized,pack_quantized,
// fp4_quantized}.py, quantization/lifecycle/{forward,initialize}.py, quantization/quant_args.py and
// compressors/model_compressors/model_compressor.py. What a loader does with a tensor:
//   decompress_weight unpacks the codes and calls dequantize(x_q, scale, zero_point) without args,
//   so the strategy is inferred from the scale's shape: [1] tensor, [R,1] channel, [R,n] group of
//   C/n columns, [r,n] with 1 < r < R a block; then x̂ = (q - zp) * scale in the scale's dtype.
//   Integers are signed (int8 codes, 4-bit codes in [-8,7]); pack_to_int32 adds 2^(b-1) and packs
//   eight per int32 along each row, element i of a word in bits 4i..4i+3; asymmetric group/channel
//   zero points are packed the same way along the rows (dim 0).
//   FP4 codes go two per byte along each row, low nibble first, as sign<<3 | magnitude index, which
//   is the E2M1 encoding. NVFP4 divides its E4M3 block scale by weight_global_scale, so the file holds
//   1/s_g, and the FP4 values are unpacked to bf16, so x̂ is bf16 whatever the scale dtype.
#include "io/export_compressed_tensors.h"

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/export_tensors.h"
#include "io/mapped_file.h"
#include "io/run_files.h"
#include "io/untrusted_json.h"
#include "quant/packing.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace ql {
namespace {

// The compressed-tensors release whose layout this writer follows; written as "version".
constexpr const char* kLibraryVersion = "0.12.2";
constexpr std::uint64_t kMaxConfigBytes = 16ULL << 20; // a model's config.json is kilobytes
constexpr int kMaxConfigDepth = 32;                    // quantization_config nests five levels
constexpr std::uint64_t kMaxConfigTreeBytes = 64ULL << 20;

[[noreturn]] void refuse(const std::string& file, const QuantizedTensor& q, const std::string& reason) {
    throw FileError(file + ": tensor '" + q.name + "' (" + std::string(nameOf(q.plan.spec.preset)) + " " +
                    std::string(nameOf(q.plan.codeTarget)) + "): no compressed-tensors layout: " + reason +
                    "; use --export-layout native to export it as the operator produces it");
}

// One rule per dimension, with the trivial blocks said plainly: a block of 1 is its own scale, a
// block as long as the dimension is one shared scale.
DimMapping::Kind kindOf(const DimMapping& m, std::int64_t size, std::int64_t* block) {
    *block = m.block;
    if (m.kind != DimMapping::Kind::Block) return m.kind;
    if (m.block == 1) return DimMapping::Kind::Full;
    if (m.block >= size) return DimMapping::Kind::Shared;
    return DimMapping::Kind::Block;
}

struct Strategy {
    std::string name; // tensor, channel, group, tensor_group, block
    std::int64_t groupSize = 0;
    std::int64_t blockRows = 0, blockCols = 0;
};

Strategy strategyOf(const QuantizedTensor& q, const std::string& file, bool needsRows) {
    const ResolvedSpec& p = q.plan;
    const auto& dims = p.layout.dims;
    for (const auto& d : dims)
        if (d.kind == DimMapping::Kind::Ragged)
            refuse(file, q, "ragged groups have no compressed-tensors strategy");
    const bool allShared = std::all_of(dims.begin(), dims.end(), [&](const DimMapping& d) {
        std::int64_t b = 0;
        return kindOf(d, p.shape[static_cast<std::size_t>(&d - dims.data())], &b) == DimMapping::Kind::Shared;
    });
    if (allShared && !(needsRows && p.shape.size() != 2)) return {"tensor"};
    if (p.shape.size() != 2)
        refuse(file, q,
               "compressed-tensors " + std::string(needsRows ? "packs" : "scales") +
                   " 2-D weights [rows, columns] only; this tensor is " + toString(p.shape));
    const std::int64_t rows = p.shape[0], cols = p.shape[1];
    std::int64_t b0 = 0, b1 = 0;
    const auto k0 = kindOf(dims[0], rows, &b0), k1 = kindOf(dims[1], cols, &b1);
    using K = DimMapping::Kind;
    if (k0 == K::Full && k1 == K::Shared) return {"channel"};
    if (k0 == K::Full && k1 == K::Block) {
        if (cols % b1 != 0)
            refuse(file, q,
                   "groups of " + std::to_string(b1) + " do not divide the " + std::to_string(cols) +
                       " columns (compressed-tensors needs equal groups)");
        return {"group", b1};
    }
    if (k0 == K::Block || (k0 == K::Shared && k1 == K::Block)) {
        const std::int64_t br = k0 == K::Shared ? rows : b0, bc = k1 == K::Shared ? cols : b1;
        if (k1 == K::Full)
            refuse(file, q, "blocks of one column are not a compressed-tensors block structure");
        if (rows % br != 0 || cols % bc != 0)
            refuse(file, q,
                   "blocks of " + std::to_string(br) + "x" + std::to_string(bc) + " do not divide " +
                       toString(p.shape) + " (compressed-tensors needs equal blocks)");
        // The loader infers the strategy from the scale's shape: [r, 1] with r < rows reads as a
        // channel scale and does not broadcast.
        if (cols / bc == 1 && rows / br != 1)
            refuse(file, q,
                   "blocks spanning every column read back as per-channel scales in compressed-tensors");
        return {"block", 0, br, bc};
    }
    if (k0 == K::Shared && k1 == K::Full)
        refuse(file, q,
               "compressed-tensors' channel strategy gives each row (axis 0) its own scale, not each column");
    refuse(file, q, "this scale layout has no compressed-tensors strategy");
}

bool integral(const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(),
                       [](float z) { return std::isfinite(z) && z == std::nearbyint(z); });
}

Tensor floatsAs(DType dtype, const Shape& shape, const std::vector<float>& values) {
    if (dtype == DType::F32) return Tensor::fromFloats(shape, values);
    Tensor t(dtype, shape);
    auto* out = reinterpret_cast<std::uint16_t*>(t.mutableData());
    for (std::size_t i = 0; i < values.size(); ++i)
        out[i] = dtype == DType::BF16 ? floatToBf16(values[i]) : floatToHalf(values[i]);
    return t;
}

template <typename T> Tensor filled(DType dtype, const Shape& shape, const std::vector<T>& values) {
    Tensor t(dtype, shape);
    if (!values.empty()) std::memcpy(t.mutableData(), values.data(), values.size() * sizeof(T));
    return t;
}

Shape scaleShapeOf(const ResolvedSpec& plan, const Strategy& s) {
    if (s.name == "tensor") return Shape{1};
    if (s.name == "channel") return Shape{plan.shape[0], 1};
    return plan.scaleShape; // [rows, groups] or [row blocks, column blocks]
}

// Zero points one per scale, shifted into compressed-tensors' signed range.
std::vector<std::int8_t> shiftedZeroPoints(const QuantizedTensor& q, std::int64_t count,
                                           std::int64_t offset) {
    std::vector<std::int8_t> zp(static_cast<std::size_t>(count));
    for (std::int64_t g = 0; g < count; ++g)
        zp[static_cast<std::size_t>(g)] =
            static_cast<std::int8_t>(static_cast<std::int64_t>(q.params.zeroPointOf(g)) + offset);
    return zp;
}

std::string moduleOf(const std::string& name) {
    return name.substr(0, name.size() - std::string(".weight").size());
}

bool isWeightName(const std::string& name) {
    const std::string suffix = ".weight";
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string observerOf(const QuantSpec& spec) {
    switch (spec.calibration.method) {
    case CalibMethod::AbsMax:
    case CalibMethod::MinMax:
        return spec.preset == Preset::NVFP4 ? "static_minmax" : "minmax";
    case CalibMethod::Mse:
        return "mse";
    default:
        return {};
    }
}

nlohmann::json readJson(const fs::path& path) {
    const std::string text = readSmallFile(path.string(), kMaxConfigBytes, "a config.json");
    // Untrusted (it sits beside a downloaded model): nesting, duplicate keys and the parsed tree's size
    // are checked before the parse, as every JSON QuantLens reads.
    checkJsonShape(text, path.string(), "JSON", kMaxConfigDepth, kMaxConfigTreeBytes);
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw FileError(path.string() + ": is not a JSON object");
    return j;
}

} // namespace

std::string compressedTensorsName(const std::string& name) {
    if (isWeightName(name)) return name;
    std::string module = name;
    for (char& c : module) {
        const auto u = static_cast<unsigned char>(c);
        if (!std::isalnum(u) && c != '_' && c != '.') c = '_';
    }
    return module + ".weight";
}

void checkCompressedTensorsNames(const std::vector<QuantizedTensor>& tensors, const ExportExtras& extras,
                                 const std::string& file) {
    // Every name the checkpoint will hold, with the source tensor it comes from.
    std::map<std::string, std::string> taken;
    const auto take = [&](const std::string& stored, const std::string& source) {
        const auto [it, fresh] = taken.emplace(stored, source);
        if (!fresh && it->second != source)
            throw FileError(file + ": tensors '" + it->second + "' and '" + source +
                            "' would both be stored as '" + stored +
                            "' in compressed-tensors, which names a module's weight \"<module>.weight\"; use "
                            "--export-layout native, which keeps every name");
    };
    for (const auto& k : extras.kept)
        take(k.name, k.name);
    for (const auto& q : tensors) {
        const std::string stored = compressedTensorsName(q.name);
        const bool packed = q.plan.codeTarget == Target::Int4 || q.plan.codeTarget == Target::UInt4 ||
                            q.plan.codeTarget == Target::Fp4E2M1;
        const ExportNames n = exportNames(stored, packed);
        for (const std::string* part : {&n.codes, &n.shape, &n.scale, &n.zeroPoint, &n.globalScale})
            if (!part->empty()) take(*part, q.name);
    }
}

CompressedTensorsArgs compressedTensorsArgs(const QuantizedTensor& q, const std::string& file) {
    const ResolvedSpec& p = q.plan;
    const Target t = p.codeTarget;
    const Preset preset = p.spec.preset;
    // A loader decompresses into the module's own weight: a conv quantized as its 2-D view
    // (quant/weight_view.h) would come back in the view's shape.
    if (p.viewed())
        refuse(file, q,
               "it is quantized as its view " + toString(p.shape) + " of " + toString(p.tensorShape) +
                   ", and compressed-tensors' loaders decompress a weight in its module's own shape");
    switch (p.convention.scaleOp) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal:
        break; // x̂ = (q - zp) * s: the step compressed-tensors multiplies by
    case ScaleOp::Multiply:
        refuse(file, q,
               "its scale is an inverse step (x̂ = (q - zp) / s) and compressed-tensors multiplies by "
               "weight_scale; no stored step reproduces the division bit for bit");
    case ScaleOp::MultiplyTwice:
        refuse(file, q,
               "sqrt mode applies the scale twice ((x * s) * s) and compressed-tensors has one "
               "multiplying weight_scale");
    }
    if (!q.params.zeroPoints.empty() && !integral(q.params.zeroPoints))
        refuse(file, q,
               "its zero points are float offsets and compressed-tensors stores integer zero points");
    // Stored as codes are (int8, or packed int4): a zero point from a file beyond the codes' range
    // (aclnnQuantize takes any) would wrap, or be a float beyond every integer type.
    for (const float z : q.params.zeroPoints)
        if (!isFloatTarget(t) && (z < static_cast<float>(codeMin(t)) || z > static_cast<float>(codeMax(t))))
            refuse(file, q,
                   "its zero point " + std::to_string(z) + " is outside the codes' range [" +
                       std::to_string(codeMin(t)) + ", " + std::to_string(codeMax(t)) +
                       "], where compressed-tensors stores zero points");

    CompressedTensorsArgs a;
    nlohmann::json w = {{"num_bits", 8},        {"type", "int"},
                        {"symmetric", true},    {"group_size", nullptr},
                        {"strategy", "tensor"}, {"block_structure", nullptr},
                        {"dynamic", false},     {"actorder", nullptr},
                        {"observer", nullptr},  {"observer_kwargs", nlohmann::json::object()}};
    const std::string observer = observerOf(p.spec);
    if (!observer.empty()) w["observer"] = observer;
    const bool fp4 = t == Target::Fp4E2M1;
    const bool packed = t == Target::Int4 || t == Target::UInt4 || fp4;
    Strategy s;
    switch (t) {
    case Target::Int8:
    case Target::UInt8:
    case Target::Int4:
    case Target::UInt4: {
        const bool unsignedCodes = t == Target::UInt8 || t == Target::UInt4;
        const int bits = (t == Target::Int8 || t == Target::UInt8) ? 8 : 4;
        a.format = bits == 8 ? "int-quantized" : "pack-quantized";
        a.codeOffset = unsignedCodes ? -(std::int64_t{1} << (bits - 1)) : 0;
        w["num_bits"] = bits;
        // Unsigned codes become signed codes with a shifted zero point, so they always carry one.
        w["symmetric"] = !unsignedCodes && p.spec.symmetric;
        s = strategyOf(q, file, packed);
        break;
    }
    case Target::Fp8E4M3:
        if (preset == Preset::MX) refuse(file, q, "compressed-tensors has no MXFP8 format");
        if (!q.params.zeroPoints.empty()) refuse(file, q, "compressed-tensors' float formats are symmetric");
        a.format = "float-quantized";
        w["type"] = "float";
        s = strategyOf(q, file, false);
        break;
    case Target::Fp4E2M1: {
        if (preset != Preset::NVFP4 && preset != Preset::MX)
            refuse(file, q,
                   "compressed-tensors stores FP4 only as NVFP4 (E4M3 block scales of 16) or MXFP4 (E8M0 "
                   "block scales of 32)");
        a.format = preset == Preset::NVFP4 ? "nvfp4-pack-quantized" : "mxfp4-pack-quantized";
        w["type"] = "float";
        w["num_bits"] = 4;
        s = strategyOf(q, file, true);
        const std::int64_t block = preset == Preset::NVFP4 ? 16 : 32;
        if (s.name != "group" || s.groupSize != block)
            refuse(file, q,
                   "compressed-tensors' " + a.format + " has blocks of " + std::to_string(block) +
                       " along the columns of a 2-D weight");
        if (preset == Preset::NVFP4) s.name = "tensor_group"; // the per-tensor global scale
        if (preset == Preset::MX)
            for (std::uint8_t c : q.params.scaleCodes)
                if (c == 0xFF)
                    refuse(file, q,
                           "an E8M0 NaN block scale (0xFF) reads back as 2^128 in compressed-tensors");
        break;
    }
    case Target::Fp8E5M2:
        refuse(file, q, "compressed-tensors' 8-bit float format is E4M3 only");
    case Target::Int32:
        refuse(file, q, "compressed-tensors has no 32-bit integer weight format");
    }
    if (s.name == "tensor" && p.shape.size() != 2 && packed)
        refuse(file, q, "compressed-tensors packs 2-D weights only; this tensor is " + toString(p.shape));
    if (fp4 && p.shape[1] % 2 != 0) refuse(file, q, "FP4 packing needs an even number of columns");
    if (!p.spec.symmetric && w["type"] == "float")
        refuse(file, q, "compressed-tensors' float formats are symmetric");
    w["strategy"] = s.name;
    if (s.groupSize > 0) w["group_size"] = s.groupSize;
    if (s.name == "block") w["block_structure"] = {s.blockRows, s.blockCols};
    a.weights = std::move(w);
    return a;
}

std::vector<NamedTensor> compressedTensorsTensors(const QuantizedTensor& q, const CompressedTensorsArgs& args,
                                                  DType scaleDType, const std::string& file,
                                                  nlohmann::json& d) {
    const ResolvedSpec& p = q.plan;
    const Target t = p.codeTarget;
    const std::string strategyName = args.weights["strategy"].get<std::string>();
    Strategy s{strategyName};
    const Shape scaleShape = scaleShapeOf(p, s);
    const std::int64_t groups = elementCount(scaleShape);
    const bool packed = args.format != "int-quantized" && args.format != "float-quantized";
    const std::string stored = compressedTensorsName(q.name);
    const ExportNames names = exportNames(stored, packed);
    std::vector<NamedTensor> out;
    if (stored != q.name) d["stored_as"] = stored; // the module compressed-tensors sees

    // Codes.
    d["codes"] = names.codes;
    d["codes_offset"] = args.codeOffset;
    if (t == Target::Fp4E2M1) {
        out.push_back({names.codes, packFp4Rows(q.codes, p.shape)});
        d["packing"] = "fp4-two-per-byte-rows";
    } else if (packed) {
        // UInt4 codes packed without an offset give the same nibbles as the shifted signed codes
        // packed with compressed-tensors' +8.
        const auto words = packCompressedTensors(q.codes, p.shape);
        out.push_back({names.codes, filled(DType::I32, Shape{p.shape[0], (p.shape[1] + 7) / 8}, words)});
        out.push_back(
            {names.shape, filled(DType::I64, Shape{2}, std::vector<std::int64_t>{p.shape[0], p.shape[1]})});
        d["shape"] = names.shape;
        d["packing"] = "compressed-tensors-int32";
    } else if (t == Target::Fp8E4M3) {
        out.push_back({names.codes, codesTensor(q)});
        d["packing"] = "none";
    } else {
        std::vector<std::int8_t> codes(static_cast<std::size_t>(q.codes.size()));
        for (std::int64_t i = 0; i < q.codes.size(); ++i)
            codes[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(q.codes.at(i) + args.codeOffset);
        out.push_back({names.codes, filled(DType::I8, p.shape, codes)});
        d["packing"] = "none";
    }

    // Scales: the step in the weight's dtype; FP4 formats keep their scale codes.
    d["scale"] = names.scale;
    if (p.spec.preset == Preset::NVFP4 || (p.spec.preset == Preset::MX && t == Target::Fp4E2M1)) {
        const bool nv = p.spec.preset == Preset::NVFP4;
        out.push_back({names.scale, filled(nv ? DType::F8E4M3 : DType::U8, scaleShape, q.params.scaleCodes)});
        d["scale_encoding"] = nv ? "e4m3" : "e8m0";
        if (nv) {
            // compressed-tensors divides the block scale by the global scale: it stores 1 / s_g.
            const float sg = q.params.tensorScale;
            const float g = sg > 0.0f ? static_cast<float>(1.0 / static_cast<double>(sg)) : 0.0f;
            out.push_back({names.globalScale, Tensor::fromFloats(Shape{1}, std::span<const float>(&g, 1))});
            d["global_scale"] = names.globalScale;
            d["global_scale_encoding"] = "reciprocal";
            d["tensor_scale"] = sg; // s_g exactly, for readers of the export (1 / (1 / s_g) may not be s_g)
        }
    } else {
        const DType dt = (scaleDType == DType::BF16 || scaleDType == DType::F16) ? scaleDType : DType::F32;
        Tensor scale = floatsAs(dt, scaleShape, q.params.scales);
        const std::vector<float> back = scale.toFloatVector();
        for (std::size_t i = 0; i < back.size(); ++i)
            if (!std::isfinite(back[i]) || (back[i] == 0.0f) != (q.params.scales[i] == 0.0f))
                refuse(file, q,
                       "scale " + std::to_string(q.params.scales[i]) + " is not representable in " +
                           std::string(nameOf(dt)) + ", the weight's dtype");
        out.push_back({names.scale, std::move(scale)});
        d["scale_encoding"] = std::string(nameOf(dt));
    }

    // Zero points: signed, one per scale; packed along the rows for 4-bit group and channel.
    if (!args.weights["symmetric"].get<bool>()) {
        const auto zp = shiftedZeroPoints(q, groups, args.codeOffset);
        if (packed && (strategyName == "group" || strategyName == "channel")) {
            const std::int64_t rows = scaleShape[0], cols = scaleShape[1];
            const std::int64_t wordRows = (rows + 7) / 8;
            std::vector<std::int32_t> words(static_cast<std::size_t>(wordRows * cols), 0);
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < cols; ++c) {
                    const auto v =
                        static_cast<std::uint32_t>(zp[static_cast<std::size_t>(r * cols + c)] + 8) & 0xFu;
                    auto& word = words[static_cast<std::size_t>((r / 8) * cols + c)];
                    word = static_cast<std::int32_t>(static_cast<std::uint32_t>(word) | (v << (4 * (r % 8))));
                }
            out.push_back({names.zeroPoint, filled(DType::I32, Shape{wordRows, cols}, words)});
            d["zero_point_packing"] = "compressed-tensors-int32-rows";
        } else {
            out.push_back({names.zeroPoint, filled(DType::I8, scaleShape, zp)});
        }
        d["zero_point"] = names.zeroPoint;
    }
    d["format"] = args.format;
    return out;
}

nlohmann::json checkConfigTarget(const std::string& exportPath, const std::string& sourcePath) {
    const fs::path target = fs::absolute(exportPath).parent_path() / "config.json";
    std::error_code ec;
    // The model's folder (the source itself when it was opened as a folder), as RunFiles knows it.
    const fs::path modelFolder = sourcePath.empty() ? fs::path() : fs::path(modelFolderOf(sourcePath));
    if (!sourcePath.empty() && sameFile(target.parent_path().string(), modelFolder.string()))
        throw FileError(exportPath +
                        ": is in the input model's own folder, where the export's config.json (with "
                        "quantization_config) would make the model read as a compressed checkpoint; "
                        "write the export to another folder");
    // The source model's own config.json, when its folder has one.
    nlohmann::json config = nlohmann::json::object();
    fs::path sourceConfig;
    if (!sourcePath.empty()) {
        sourceConfig = modelFolder / "config.json";
        if (fs::is_regular_file(sourceConfig, ec))
            config = readJson(sourceConfig);
        else
            sourceConfig.clear();
    }
    if (fs::exists(target, ec)) {
        nlohmann::json existing = readJson(target);
        const bool ours = existing.contains("quantlens_export");
        nlohmann::json a = existing, b = config;
        for (auto* j : {&a, &b}) {
            j->erase("quantization_config");
            j->erase("quantlens_export");
        }
        if (!ours && (sourceConfig.empty() || a != b))
            throw FileError(target.string() +
                            ": a config.json that is neither a QuantLens export's nor a copy of the "
                            "source model's is already there; write the export to another folder");
    }
    return config;
}

CompressedTensorsConfig compressedTensorsConfig(const std::string& exportPath,
                                                const std::vector<QuantizedTensor>& tensors,
                                                const ExportExtras& extras, const std::string& sourcePath) {
    const fs::path target = fs::absolute(exportPath).parent_path() / "config.json";
    checkCompressedTensorsNames(tensors, extras, exportPath);
    // One config group per distinct (format, weight arguments), in the order first met.
    std::vector<std::pair<nlohmann::json, std::vector<std::string>>> groups;
    std::vector<std::string> formats;
    for (const auto& q : tensors) {
        const CompressedTensorsArgs a = compressedTensorsArgs(q, exportPath);
        const nlohmann::json key = {{"format", a.format}, {"weights", a.weights}};
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
        if (it == groups.end()) {
            groups.push_back({key, {}});
            it = groups.end() - 1;
        }
        it->second.push_back(moduleOf(compressedTensorsName(q.name)));
        if (std::find(formats.begin(), formats.end(), a.format) == formats.end()) formats.push_back(a.format);
    }
    nlohmann::json configGroups = nlohmann::json::object();
    for (std::size_t i = 0; i < groups.size(); ++i)
        configGroups["group_" + std::to_string(i)] = {{"targets", groups[i].second},
                                                      {"weights", groups[i].first["weights"]},
                                                      {"input_activations", nullptr},
                                                      {"output_activations", nullptr},
                                                      {"format", groups[i].first["format"]}};
    nlohmann::json ignore = nlohmann::json::array();
    for (const auto& k : extras.kept)
        if (isWeightName(k.name)) ignore.push_back(moduleOf(k.name));
    const nlohmann::json quantizationConfig = {
        {"config_groups", std::move(configGroups)},
        {"format", formats.size() == 1 ? formats[0] : std::string("mixed-precision")},
        {"global_compression_ratio", nullptr},
        {"ignore", std::move(ignore)},
        {"kv_cache_scheme", nullptr},
        {"quant_method", "compressed-tensors"},
        {"quantization_status", "compressed"},
        {"sparsity_config", nlohmann::json::object()},
        {"transform_config", nlohmann::json::object()},
        {"version", kLibraryVersion}};

    nlohmann::json config = checkConfigTarget(exportPath, sourcePath);
    config["quantization_config"] = quantizationConfig;
    config["quantlens_export"] = {{"file", fs::path(exportPath).filename().string()},
                                  {"format", "quantlens-export"}};
    return {target.string(), config.dump(2) + "\n"};
}

void writeCompressedTensorsConfig(const CompressedTensorsConfig& config) {
    AtomicFile f(config.path);
    f.write(config.text.data(), config.text.size());
    f.commit();
}

} // namespace ql
