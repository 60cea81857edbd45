#include "io/export_onnx_qdq.h"

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/printable.h"
#include "quant/reference.h"
#include "runtime/ort_runtime.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <set>
#include <unordered_map>
#include <variant>

namespace ql {
namespace {

// TensorProto.DataType values past the ONNX headers Debian ships (they stop at opset 17).
constexpr int kUint4 = 21;
constexpr int kInt4 = 22;

// How one quantized weight is stored: DequantizeLinear's scheme and the opset it needs.
struct QdqForm {
    int opset = 10;
    int axis = -1;              // per-axis or blocked; -1 per-tensor
    std::int64_t blockSize = 0; // blocked
    Shape scaleDims;            // [] per-tensor, [n] per-axis, the scale shape when blocked
    int codeType = onnx::TensorProto::INT8;
};

// The main graph's float32 weights a QDQ export can replace: initializers and Constant values.
std::set<std::string> replaceableWeights(const onnx::GraphProto& graph) {
    std::set<std::string> names;
    for (const auto& init : graph.initializer())
        if (init.data_type() == onnx::TensorProto::FLOAT) names.insert(init.name());
    for (const auto& node : graph.node())
        if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx") &&
            node.output_size() > 0)
            for (const auto& a : node.attribute())
                if (a.name() == "value" && a.has_t() && a.t().data_type() == onnx::TensorProto::FLOAT)
                    names.insert(node.output(0));
    return names;
}

onnx::ModelProto readModel(const std::string& path) {
    requireRegularFile(path);
    const auto file = MappedFile::open(path);
    if (file->size() > static_cast<std::uint64_t>(INT_MAX))
        throw FileError(path + ": past protobuf's 2 GiB limit for one message");
    onnx::ModelProto model;
    if (!model.ParseFromArray(file->data(), static_cast<int>(file->size())) || !model.has_graph())
        throw FileError(path + ": not a valid ONNX model");
    return model;
}

// The form of `q` or the reason it has none. Every check a tensor's export needs, once.
std::variant<QdqForm, std::string> formOf(const QuantizedTensor& q) {
    const ResolvedSpec& p = q.plan;
    if (p.spec.preset == Preset::MX)
        return std::string("MX codes are minifloats under E8M0 block exponents; the QDQ export writes "
                           "integer codes (ONNX's float4/float8e8m0 types need opset 23)");
    if (p.spec.preset == Preset::NVFP4)
        return std::string("NVFP4 scales twice (an fp32 tensor scale over E4M3 block scales) and "
                           "DequantizeLinear multiplies by one scale");
    const Target t = p.codeTarget;
    if (isFloatTarget(t))
        return std::string(nameOf(t)) +
               " codes: the QDQ export writes integer codes (int8, uint8, int4, uint4); export fp8 to "
               ".safetensors";
    if (t == Target::Int32 || q.codes.target() == Target::Int32)
        return std::string("int32 codes: the QDQ export writes int8, uint8, int4 or uint4 codes");
    switch (p.convention.scaleOp) {
    case ScaleOp::Divide:
    case ScaleOp::MultiplyReciprocal:
        break;
    case ScaleOp::Multiply:
        return std::string("its scale is an inverse step (x̂ = (q - zp) / s) and DequantizeLinear "
                           "multiplies by its scale");
    case ScaleOp::MultiplyTwice:
        return std::string("sqrt mode applies the scale twice and DequantizeLinear once");
    }
    QdqForm f;
    f.codeType = t == Target::Int8    ? onnx::TensorProto::INT8
                 : t == Target::UInt8 ? onnx::TensorProto::UINT8
                 : t == Target::Int4  ? kInt4
                                      : kUint4;
    if (isSubByte(t)) f.opset = 21;
    // The dimensions that have more than one scale: none (per-tensor), one with a scale per index
    // (per-axis), or one in blocks with a scale per index on every other (blocked).
    const Shape& shape = p.shape;
    int full = 0, blocked = -1, fullAxis = -1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const DimMapping& m = p.layout.dims[d];
        const bool one = shape[d] <= 1 || m.kind == DimMapping::Kind::Shared ||
                         (m.kind == DimMapping::Kind::Block && m.block >= shape[d]);
        if (one) continue;
        if (m.kind == DimMapping::Kind::Ragged)
            return std::string("groups of unequal sizes: DequantizeLinear's blocks are all one size");
        if (m.kind == DimMapping::Kind::Block) {
            if (blocked >= 0) return std::string("blocks along two axes: DequantizeLinear blocks one");
            blocked = static_cast<int>(d);
            f.blockSize = m.block;
        } else {
            ++full;
            fullAxis = static_cast<int>(d);
        }
    }
    // A view (quant/weight_view.h): the graph holds the weight in its own shape, where the view's blocks
    // cross the kernel's axes; its first (a conv's O) or last axis (a Keras kernel's O) is the tensor's.
    if (p.viewed() && blocked >= 0)
        return std::string("blocks along the kernel flattened into " + toString(shape) +
                           ": DequantizeLinear blocks one axis of the weight's own shape " +
                           toString(p.tensorShape));
    if (p.viewed() && full == 1) {
        const bool first = fullAxis == 0 && shape[0] == p.tensorShape.front();
        const bool last = fullAxis == 1 && shape[1] == p.tensorShape.back();
        if (!first && !last)
            return std::string("scales along axis " + std::to_string(fullAxis) + " of its view " +
                               toString(shape) + " are along no axis of its own shape " +
                               toString(p.tensorShape));
        f.axis = first ? 0 : static_cast<int>(p.tensorShape.size()) - 1;
        f.opset = std::max(f.opset, 13);
        f.scaleDims = {shape[static_cast<std::size_t>(fullAxis)]};
        full = 0; // said: no per-axis form of the view's below
    }
    if (blocked >= 0) {
        // Blocked scales keep every other dimension: a dimension sharing one scale cannot be said.
        for (std::size_t d = 0; d < shape.size(); ++d)
            if (static_cast<int>(d) != blocked && shape[d] > 1 &&
                p.layout.dims[d].kind != DimMapping::Kind::Full)
                return std::string("blocks along axis " + std::to_string(blocked) + " with axis " +
                                   std::to_string(d) +
                                   " sharing scales: DequantizeLinear's blocked scales have one entry per "
                                   "index of every other axis");
        f.axis = blocked;
        f.opset = 21;
        f.scaleDims = p.scaleShape;
    } else if (full > 1) {
        return std::string("scales along two axes: DequantizeLinear has one axis");
    } else if (full == 1) {
        f.axis = fullAxis;
        f.opset = std::max(f.opset, 13);
        f.scaleDims = {shape[static_cast<std::size_t>(fullAxis)]};
    }
    if (elementCount(f.scaleDims) != static_cast<std::int64_t>(q.params.scales.size()))
        return std::string(std::to_string(q.params.scales.size()) + " scales for DequantizeLinear's " +
                           std::to_string(elementCount(f.scaleDims)));
    const auto lo = static_cast<float>(codeMin(t)), hi = static_cast<float>(codeMax(t));
    for (const float z : q.params.zeroPoints)
        if (!(z == std::nearbyint(z) && z >= lo && z <= hi))
            return std::string("its zero point " + std::to_string(z) +
                               " is not an integer in the codes' range, where DequantizeLinear takes it");
    // DequantizeLinear: y = (x - zero_point) * scale, the difference exact, one f32 multiply. The
    // export stores what the run measured, so every element must come out as the reference's.
    const std::vector<float> ref = dequantizeReference(p, q.params, q.codes);
    ScaleIndexer indexer(p.layout, p.shape);
    std::string differs;
    indexer.forEach([&](std::int64_t i, std::int64_t k) {
        if (!differs.empty()) return;
        const auto diff = q.codes.at(i) - static_cast<std::int32_t>(q.params.zeroPointOf(k));
        const float y = static_cast<float>(diff) * q.params.scales[static_cast<std::size_t>(k)];
        const float r = ref[static_cast<std::size_t>(i)];
        if (std::bit_cast<std::uint32_t>(y) != std::bit_cast<std::uint32_t>(r))
            differs = "element " + std::to_string(i) + " dequantizes to " + std::to_string(r) +
                      " and DequantizeLinear would give " + std::to_string(y);
    });
    if (!differs.empty()) return differs;
    return f;
}

std::string refusalOf(const QuantizedTensor& q, const std::set<std::string>& weights) {
    if (!weights.count(q.name))
        return "not a float32 initializer or Constant of the model's main graph, which the QDQ export "
               "rewrites";
    const auto form = formOf(q);
    if (const auto* why = std::get_if<std::string>(&form)) return *why;
    return {};
}

void setTensor(onnx::TensorProto& t, const std::string& name, int type, const Shape& dims, const void* data,
               std::size_t bytes) {
    t.Clear();
    t.set_name(name);
    t.set_data_type(type);
    for (const auto d : dims)
        t.add_dims(d);
    t.set_raw_data(data, bytes); // little-endian (x86-64)
}

// Codes one a byte, or two a byte low nibble first for int4/uint4 (ONNX's packing).
std::string codeBytes(const std::vector<std::int32_t>& values, bool packed) {
    std::string out(packed ? (values.size() + 1) / 2 : values.size(), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto v = static_cast<std::uint8_t>(values[i]);
        if (packed)
            out[i / 2] =
                static_cast<char>(static_cast<std::uint8_t>(out[i / 2]) | ((v & 0x0f) << (i % 2 ? 4 : 0)));
        else
            out[i] = static_cast<char>(v);
    }
    return out;
}

class UniqueNames {
public:
    explicit UniqueNames(const onnx::GraphProto& g) {
        for (const auto& t : g.initializer())
            m_used.insert(t.name());
        for (const auto& n : g.node()) {
            m_used.insert(n.name());
            m_used.insert(n.input().begin(), n.input().end());
            m_used.insert(n.output().begin(), n.output().end());
        }
        for (const auto& v : g.input())
            m_used.insert(v.name());
        for (const auto& v : g.output())
            m_used.insert(v.name());
        for (const auto& v : g.value_info())
            m_used.insert(v.name());
    }
    std::string make(const std::string& base) {
        std::string name = base;
        for (int k = 1; !m_used.insert(name).second; ++k)
            name = base + "_" + std::to_string(k);
        return name;
    }

private:
    std::set<std::string> m_used;
};

// The smallest IR version each opset needs (onnx/helper.py's VERSION_TABLE).
std::int64_t irVersionFor(int opset) {
    return opset >= 21 ? 10 : opset >= 13 ? 7 : 5;
}

} // namespace

std::function<std::string(const QuantizedTensor&)> onnxQdqRefusals(const std::string& modelPath) {
    auto weights =
        std::make_shared<const std::set<std::string>>(replaceableWeights(readModel(modelPath).graph()));
    return [weights](const QuantizedTensor& q) { return refusalOf(q, *weights); };
}

void exportOnnxQdq(const std::string& path, const std::vector<QuantizedTensor>& tensors,
                   const std::string& modelPath) {
    refuseOverwritingSource(path, modelPath);
    onnx::ModelProto model = readModel(modelPath);
    onnx::GraphProto& graph = *model.mutable_graph();
    for (const auto& init : graph.initializer())
        if (init.data_location() == onnx::TensorProto::EXTERNAL)
            throw FileError(path + ": not written: " + modelPath + " keeps '" + printable(init.name()) +
                            "' in an external data file, which the QDQ export does not rewrite");
    const std::set<std::string> weights = replaceableWeights(graph);
    std::unordered_map<std::string, std::pair<const QuantizedTensor*, QdqForm>> quantized;
    int opset = 10;
    for (const QuantizedTensor& q : tensors) {
        if (!weights.count(q.name))
            throw FileError(path + ": tensor '" + printable(q.name) + "': " + refusalOf(q, weights));
        auto form = formOf(q);
        if (const auto* why = std::get_if<std::string>(&form))
            throw FileError(path + ": tensor '" + printable(q.name) + "': " + *why);
        opset = std::max(opset, std::get<QdqForm>(form).opset);
        quantized.emplace(q.name, std::make_pair(&q, std::get<QdqForm>(form)));
    }
    if (quantized.empty()) throw FileError(path + ": not written: no tensor was quantized");

    UniqueNames names(graph);
    // Each weight's codes, scale and zero point as initializers (scale and zero point) and the codes
    // where the weight was (initializer or Constant); DequantizeLinear gives the weight's own name.
    auto partsOf = [&](const std::string& name, onnx::TensorProto& codes) {
        const auto& [q, f] = quantized.at(name);
        std::vector<std::int32_t> values(static_cast<std::size_t>(q->codes.size()));
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = q->codes.at(static_cast<std::int64_t>(i));
        const bool packed = f.codeType == kInt4 || f.codeType == kUint4;
        const std::string codeName = names.make(name + "_quantized");
        const std::string bytes = codeBytes(values, packed);
        setTensor(codes, codeName, f.codeType, q->plan.ownShape(), bytes.data(), bytes.size());
        onnx::NodeProto dq;
        dq.set_op_type("DequantizeLinear");
        dq.set_name(names.make(name + "_DequantizeLinear"));
        dq.add_input(codeName);
        const std::string scaleName = names.make(name + "_scale");
        setTensor(*graph.add_initializer(), scaleName, onnx::TensorProto::FLOAT, f.scaleDims,
                  q->params.scales.data(), q->params.scales.size() * sizeof(float));
        dq.add_input(scaleName);
        if (!q->params.zeroPoints.empty()) {
            std::vector<std::int32_t> zp(q->params.scales.size());
            for (std::size_t k = 0; k < zp.size(); ++k)
                zp[k] = static_cast<std::int32_t>(q->params.zeroPointOf(static_cast<std::int64_t>(k)));
            const std::string zpName = names.make(name + "_zero_point");
            const std::string zpBytes = codeBytes(zp, packed);
            setTensor(*graph.add_initializer(), zpName, f.codeType, f.scaleDims, zpBytes.data(),
                      zpBytes.size());
            dq.add_input(zpName);
        }
        dq.add_output(name);
        if (f.axis >= 0) {
            auto* a = dq.add_attribute();
            a->set_name("axis");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(f.axis);
        }
        if (f.blockSize > 0) {
            auto* a = dq.add_attribute();
            a->set_name("block_size");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(f.blockSize);
        }
        return dq;
    };

    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    const int initializers = graph.initializer_size(); // the scales and zero points come after
    for (int i = 0; i < initializers; ++i) {
        onnx::TensorProto& init = *graph.mutable_initializer(i);
        if (!quantized.count(init.name())) continue;
        const std::string name = init.name();
        *nodes.Add() = partsOf(name, init);
    }
    for (onnx::NodeProto& node : *graph.mutable_node()) {
        const bool weight = node.op_type() == "Constant" && node.output_size() > 0 &&
                            quantized.count(node.output(0)) &&
                            (node.domain().empty() || node.domain() == "ai.onnx");
        onnx::AttributeProto* value = nullptr;
        if (weight)
            for (auto& a : *node.mutable_attribute())
                if (a.name() == "value" && a.has_t()) value = &a;
        if (!value) {
            *nodes.Add() = std::move(node);
            continue;
        }
        const std::string name = node.output(0);
        onnx::NodeProto dq = partsOf(name, *value->mutable_t());
        node.set_output(0, dq.input(0));
        *nodes.Add() = std::move(node);
        *nodes.Add() = std::move(dq);
    }
    graph.mutable_node()->Swap(&nodes);
    // A weight an older model also lists as a graph input is now a node's output.
    auto* inputs = graph.mutable_input();
    inputs->erase(
        std::remove_if(inputs->begin(), inputs->end(),
                       [&](const onnx::ValueInfoProto& v) { return quantized.count(v.name()) > 0; }),
        inputs->end());

    int modelOpset = 0;
    onnx::OperatorSetIdProto* defaultDomain = nullptr;
    for (auto& o : *model.mutable_opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") {
            defaultDomain = &o;
            modelOpset = static_cast<int>(o.version());
        }
    const bool raised = modelOpset < opset;
    if (raised) {
        if (!defaultDomain) defaultDomain = model.add_opset_import();
        defaultDomain->set_version(opset);
        model.set_ir_version(std::max<std::int64_t>(model.ir_version(), irVersionFor(opset)));
    }
    nlohmann::json meta = {{"format", "quantlens-qdq-export"},
                           {"model", std::filesystem::path(modelPath).filename().string()}};
    for (const QuantizedTensor& q : tensors)
        meta["tensors"].push_back({{"name", q.name}, {"spec", describe(q.plan.spec)}});
    auto* prop = model.add_metadata_props();
    prop->set_key("quantlens");
    prop->set_value(meta.dump());
    const std::string bytes = model.SerializeAsString();

    if (raised) {
        // A raised opset changes what some operators mean: the export stands only if the runtime
        // takes the model at the new opset.
        const std::string why = "the model imports opset " + std::to_string(modelOpset) + " and its " +
                                "DequantizeLinear weights need opset " + std::to_string(opset);
        try {
            (void)OrtRuntime::find()->open(bytes, path);
        } catch (const RuntimeError& e) {
            throw FileError(path + ": not written: " + why +
                            "; raising it needs ONNX Runtime to accept the "
                            "raised model: " +
                            e.what());
        }
    }
    AtomicFile file(path, modelPath);
    file.write(bytes.data(), bytes.size());
    file.commit();
}

} // namespace ql
