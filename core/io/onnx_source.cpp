#include "io/onnx_source.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/onnx_qdq.h"
#include "io/onnx_tensor.h"
#include "io/onnx_wire.h"
#include "io/printable.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace ql {
namespace {

// Subgraph nesting (an If inside a Loop body inside ...). Protobuf's own limit of 100 nested
// messages allows about 33 (graph, node and attribute are one level each); real models use a few.
constexpr int kMaxGraphDepth = 32;

// The memory the tensor list may take: a subgraph's tensors are named after the nodes around them,
// so a 1 MB node name over 1,500 one-float initializers of a 1 MB file made 1.5 GB of names, each
// kept three times. A few times the file, and an allowance no real model's names come near.
constexpr std::uint64_t kListingPerFileByte = 4;
constexpr std::uint64_t kListingAllowance = 256ULL << 20;
// Per tensor, besides its name's three copies: the entry, its info and location, index nodes.
constexpr std::uint64_t kListingPerTensor = 512;
// The parsed messages likewise: raw_data is held once at its size, but a 44-byte Constant node is some
// 600 bytes of messages and strings, so 2.4M of them took gigabytes before any check could run.
constexpr std::uint64_t kParsePerFileByte = 4;
constexpr std::uint64_t kParseAllowance = 256ULL << 20;

bool isDefaultDomain(const std::string& d) {
    return d.empty() || d == "ai.onnx";
}

} // namespace

/// Walks the graph and its subgraphs in convert_onnx.py's order, filling the source's lists.
class OnnxGraphReader {
public:
    OnnxGraphReader(OnnxSource& source, std::uint64_t fileBytes)
        : m_source(source)
        , m_external(source.m_path)
        , m_budget(kListingPerFileByte * fileBytes + kListingAllowance) {}

    void read(onnx::GraphProto& graph) {
        std::string prefix;
        walk(graph, prefix, nullptr, 0);
        m_source.m_externalFiles = m_external.paths();
    }

private:
    // The constants a graph's nodes can name: its own, then those of the graphs around it.
    struct Scope {
        const Scope* parent = nullptr;
        std::unordered_map<std::string, std::size_t> names;
        const OnnxEntry* find(const std::string& name, const std::vector<OnnxEntry>& entries) const {
            for (const Scope* s = this; s; s = s->parent)
                if (const auto it = s->names.find(name); it != s->names.end()) return &entries[it->second];
            return nullptr;
        }
    };

    const std::string& model() const { return m_source.m_path; }

    // Counts a tensor about to be listed (or said not read) under a name of `nameBytes`, before the
    // name is built; refuses the file once the list would pass its budget.
    void charge(std::size_t nameBytes) {
        hold(3 * static_cast<std::uint64_t>(nameBytes) + kListingPerTensor);
    }
    void hold(std::uint64_t bytes) {
        m_charged += bytes;
        if (m_charged <= m_budget) return;
        const std::string why =
            m_longest ? "; a subgraph's tensor names repeat the names of the nodes around it, here up to " +
                            std::to_string(m_longest) + " bytes"
                      : "";
        throw FileError(model() + ": listing its tensors would take more than " +
                        std::to_string(m_budget >> 20) + " MiB of memory (" +
                        std::to_string(m_source.m_entries.size() + m_source.m_unlisted.size()) +
                        " tensors so far" + why + "); refused");
    }

    void add(OnnxEntry e, Scope* scope, const std::string& localName) {
        const std::string& name = e.info.name;
        if (name.empty()) throw FileError(model() + ": a tensor (" + e.info.location + ") has an empty name");
        if (m_source.m_index.count(name))
            throw FileError(model() + ": " + printable(name) + ": two tensors have this name");
        m_source.m_index[name] = m_source.m_entries.size();
        if (scope) scope->names[localName] = m_source.m_entries.size();
        m_source.m_infos.push_back(e.info);
        m_source.m_entries.push_back(std::move(e));
    }

    // A tensor of an element type QuantLens does not read: said, not listed.
    void notRead(const std::string& name, int type) {
        const std::string typeName =
            onnx::TensorProto_DataType_IsValid(type)
                ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type))
                : std::to_string(type);
        m_source.m_unlisted.push_back({name, "ONNX data type " + typeName + " is not one QuantLens reads"});
    }

    void constant(onnx::NodeProto& node, const std::string& name, Scope& scope) {
        for (auto& a : *node.mutable_attribute()) {
            std::optional<OnnxEntry> e;
            if (a.name() == "value") {
                e = onnxio::decodeTensor(*a.mutable_t(), name, "Constant node", model(), m_external);
                if (!e) return notRead(name, a.t().data_type());
            } else if (a.name() == "value_float") {
                e = onnxio::floatsEntry(name, {a.f()}, true);
            } else if (a.name() == "value_floats") {
                e = onnxio::floatsEntry(name, {a.floats().begin(), a.floats().end()}, false);
            } else if (a.name() == "value_int") {
                e = onnxio::intsEntry(name, {a.i()}, true);
            } else if (a.name() == "value_ints") {
                e = onnxio::intsEntry(name, {a.ints().begin(), a.ints().end()}, false);
            }
            if (e) return add(std::move(*e), &scope, node.output(0));
        } // sparse_value and strings are not weights
    }

    void dequantizeLinear(const onnx::NodeProto& node, const std::string& prefix, const Scope& scope) {
        if (node.input_size() < 2 || node.output_size() < 1) return;
        const auto& entries = m_source.m_entries;
        const OnnxEntry* x = scope.find(node.input(0), entries);
        const OnnxEntry* scale = scope.find(node.input(1), entries);
        const bool namesZero = node.input_size() > 2 && !node.input(2).empty();
        const OnnxEntry* zero = namesZero ? scope.find(node.input(2), entries) : nullptr;
        if (!x || !scale || (namesZero && !zero)) return; // an activation, computed at run time
        if (x->qdq >= 0) return;                          // a DequantizeLinear of a DequantizeLinear
        // Its name, and those of its parts again (in the description and the location).
        charge(prefix.size() + node.output(0).size() + x->info.name.size() + scale->info.name.size() +
               (zero ? zero->info.name.size() : 0));
        QdqWeight q = onnxio::describeQdq(node, prefix + node.output(0), *x, *scale, zero, model());
        OnnxEntry e;
        e.info.name = q.output;
        e.info.dtype = DType::F32;
        e.info.shape = x->info.shape;
        e.info.byteSize = 4 * static_cast<std::uint64_t>(elementCount(e.info.shape));
        e.info.location = "QDQ " + q.schemeText() + ": DequantizeLinear(" + printable(q.codes) + " " +
                          q.codeType + ", " + printable(q.scale) +
                          (q.zeroPoint.empty() ? "" : ", " + printable(q.zeroPoint)) + ")";
        e.qdq = static_cast<int>(m_source.m_qdq.size());
        m_source.m_qdq.push_back(std::move(q));
        add(std::move(e), nullptr, {});
    }

    // The first node consuming each listed tensor, with the attributes that decide the weight's layout
    // (weight_role.h): a constant the scope holds, or a QDQ weight's DequantizeLinear output.
    void noteUses(const onnx::NodeProto& node, const std::string& prefix, const Scope& scope) {
        WeightUse use;
        use.op = node.op_type();
        for (const auto& a : node.attribute()) {
            if (a.name() == "transB" && node.op_type() == "Gemm") use.transB = a.i() != 0;
            if (a.name() == "group" && node.op_type() != "Gemm") use.group = a.i();
        }
        for (int k = 0; k < node.input_size(); ++k) {
            const std::string& input = node.input(k);
            if (input.empty()) continue;
            const OnnxEntry* e = scope.find(input, m_source.m_entries);
            if (!e)
                if (const auto it = m_source.m_index.find(prefix + input);
                    it != m_source.m_index.end() && m_source.m_entries[it->second].qdq >= 0)
                    e = &m_source.m_entries[it->second];
            if (!e) continue;
            use.input = k;
            m_source.m_uses.try_emplace(e->info.name, use);
        }
    }

    // `prefix` names the graph ("<node>/<attribute>/[<k>/]" per level): one buffer for the whole walk,
    // extended for a subgraph and cut back after it, so a chain of subgraphs under long node names
    // holds each name once, not once per level.
    void walk(onnx::GraphProto& graph, std::string& prefix, const Scope* parent, int depth) {
        if (depth > kMaxGraphDepth)
            throw FileError(model() + ": " + printable(prefix) + ": subgraphs nested deeper than " +
                            std::to_string(kMaxGraphDepth) + " levels");
        m_longest = std::max<std::uint64_t>(m_longest, prefix.size());
        Scope scope{parent, {}};
        for (auto& init : *graph.mutable_initializer()) {
            charge(prefix.size() + init.name().size());
            if (auto e = onnxio::decodeTensor(init, prefix + init.name(), "initializer", model(), m_external))
                add(std::move(*e), &scope, init.name());
            else
                notRead(prefix + init.name(), init.data_type());
        }
        for (int i = 0; i < graph.node_size(); ++i) {
            onnx::NodeProto& node = *graph.mutable_node(i);
            if (node.op_type() == "Constant" && isDefaultDomain(node.domain()) && node.output_size() > 0) {
                charge(prefix.size() + node.output(0).size());
                constant(node, prefix + node.output(0), scope);
            }
            if (node.op_type() == "DequantizeLinear" &&
                (isDefaultDomain(node.domain()) || node.domain() == "com.microsoft"))
                dequantizeLinear(node, prefix, scope);
            if (isDefaultDomain(node.domain())) noteUses(node, prefix, scope);
            for (auto& a : *node.mutable_attribute()) {
                if (a.type() == onnx::AttributeProto::GRAPH) {
                    sub(*a.mutable_g(), prefix, node, i, a.name() + "/", scope, depth);
                } else if (a.type() == onnx::AttributeProto::GRAPHS) {
                    for (int k = 0; k < a.graphs_size(); ++k)
                        sub(*a.mutable_graphs(k), prefix, node, i, a.name() + "/" + std::to_string(k) + "/",
                            scope, depth);
                }
            }
        }
    }

    // A subgraph of node `i`: walked under "<prefix><node name or OpType_i>/<tail>".
    void sub(onnx::GraphProto& graph, std::string& prefix, const onnx::NodeProto& node, int i,
             const std::string& tail, const Scope& scope, int depth) {
        const std::size_t mark = prefix.size();
        const std::string& name = node.name();
        const std::size_t added = (name.empty() ? node.op_type().size() + 12 : name.size()) + 1 + tail.size();
        hold(added); // the buffer's growth, while the subgraph is walked
        prefix += name.empty() ? node.op_type() + "_" + std::to_string(i) : name;
        prefix += '/';
        prefix += tail;
        walk(graph, prefix, &scope, depth + 1);
        prefix.resize(mark);
        m_charged -= added;
    }

    OnnxSource& m_source;
    onnxio::ExternalFiles m_external;
    std::uint64_t m_budget;
    std::uint64_t m_charged = 0;
    std::uint64_t m_longest = 0; // the longest subgraph prefix met, for the message
};

std::unique_ptr<OnnxSource> OnnxSource::open(const std::string& path) {
    requireRegularFile(path);
    std::unique_ptr<OnnxSource> source(new OnnxSource);
    source->m_path = path;
    auto model = std::make_unique<onnx::ModelProto>();
    std::uint64_t fileBytes = 0;
    {
        // Parsed from a mapping: protobuf copies each raw_data once, at its exact size, into the
        // message; the mapping's pages (the system's file cache) are let go right after.
        const auto file = MappedFile::open(path);
        fileBytes = file->size();
        if (file->size() == 0) throw FileError(path + ": empty file, not an ONNX model");
        if (file->size() > static_cast<std::uint64_t>(INT_MAX))
            throw FileError(
                path + ": " + std::to_string(file->size()) +
                " bytes, past protobuf's 2 GiB limit for one message (models this large keep their "
                "weights in external data files)");
        // Protobuf builds the whole model at once: what that takes is read from the wire format first.
        const std::uint64_t budget = kParsePerFileByte * fileBytes + kParseAllowance;
        if (const std::uint64_t need = onnxio::parsedBytes(file->data(), file->size(), budget); need > budget)
            throw FileError(path + ": parsing it would take more than " + std::to_string(budget >> 20) +
                            " MiB of memory for its " + std::to_string(fileBytes) +
                            " bytes (many small messages: nodes, attributes, names); refused");
        if (!model->ParseFromArray(file->data(), static_cast<int>(file->size())))
            throw FileError(path + ": not a valid ONNX model (truncated, not protobuf, or nested deeper than "
                                   "protobuf's limit of 100 levels)");
    }
    if (!model->has_graph() || model->ir_version() <= 0)
        throw FileError(path + ": not an ONNX model (no " + (model->has_graph() ? "IR version" : "graph") +
                        ")");
    auto& info = source->m_modelInfo;
    info.push_back(modelInfoEntry("ir_version", std::to_string(model->ir_version())));
    if (!model->producer_name().empty())
        info.push_back(modelInfoEntry("producer_name", model->producer_name()));
    if (!model->producer_version().empty())
        info.push_back(modelInfoEntry("producer_version", model->producer_version()));
    if (!model->domain().empty()) info.push_back(modelInfoEntry("domain", model->domain()));
    if (model->model_version() != 0)
        info.push_back(modelInfoEntry("model_version", std::to_string(model->model_version())));
    for (const auto& opset : model->opset_import())
        info.push_back(
            modelInfoEntry("opset " + (opset.domain().empty() ? std::string("ai.onnx") : opset.domain()),
                           std::to_string(opset.version())));
    for (const auto& prop : model->metadata_props())
        info.push_back(modelInfoEntry(prop.key(), prop.value()));
    OnnxGraphReader(*source, fileBytes).read(*model->mutable_graph());
    return source;
}

std::vector<std::string> OnnxSource::files() const {
    std::vector<std::string> all{m_path};
    all.insert(all.end(), m_externalFiles.begin(), m_externalFiles.end());
    return all;
}

const OnnxEntry& OnnxSource::entry(const std::string& name) const {
    const auto it = m_index.find(name);
    if (it == m_index.end()) {
        if (const UnlistedEntry* u = findUnlisted(name))
            throw FileError(m_path + ": " + printable(name) + ": " + u->reason);
        throw FileError(m_path + ": " + printable(name) + ": no such tensor");
    }
    return m_entries[it->second];
}

Tensor OnnxSource::load(const std::string& name) const {
    const OnnxEntry& e = entry(name);
    return e.qdq >= 0 ? dequantize(e, 0, e.info.shape) : loadStored(e, 0, e.info.shape);
}

Tensor OnnxSource::loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const {
    const OnnxEntry& e = entry(name);
    const Shape& shape = e.info.shape;
    if (shape.empty() || begin < 0 || count < 0 || begin > shape[0] || count > shape[0] - begin)
        throw FileError(m_path + ": " + printable(name) + ": rows [" + std::to_string(begin) + ", +" +
                        std::to_string(count) + ") are outside shape " + toString(shape));
    const std::int64_t row = shape[0] ? elementCount(shape) / shape[0] : 0;
    Shape rows = shape;
    rows[0] = count;
    return e.qdq >= 0 ? dequantize(e, begin * row, rows) : loadStored(e, begin * row, rows);
}

void OnnxSource::release(const std::string& name) const {
    const OnnxEntry& e = entry(name);
    if (e.qdq >= 0) return release(m_qdq[static_cast<std::size_t>(e.qdq)].codes);
    if (e.external) e.external->release(e.offset, e.packed4 ? (e.info.byteSize + 1) / 2 : e.info.byteSize);
}

Tensor OnnxSource::loadStored(const OnnxEntry& e, std::int64_t first, const Shape& shape) const {
    const std::int64_t count = elementCount(shape);
    const std::byte* base =
        e.external ? e.external->data() + e.offset : reinterpret_cast<const std::byte*>(e.bytes->data());
    if (!e.packed4) {
        std::shared_ptr<const void> owner =
            e.external ? std::shared_ptr<const void>(e.external) : std::shared_ptr<const void>(e.bytes);
        return Tensor(e.info.dtype, shape, base + first * storageBytes(e.info.dtype), std::move(owner));
    }
    // Two a byte, low nibble first; int4 sign-extended into int8, uint4 and fp4 one code per byte.
    Tensor t(e.info.dtype, shape);
    auto* out = reinterpret_cast<std::uint8_t*>(t.mutableData());
    const bool signedCodes = e.info.dtype == DType::I8;
    for (std::int64_t j = 0; j < count; ++j) {
        const std::int64_t i = first + j;
        const auto byte = std::to_integer<std::uint8_t>(base[i / 2]);
        std::uint8_t v = (i & 1) ? byte >> 4 : byte & 0x0f;
        if (signedCodes && (v & 0x08)) v |= 0xf0;
        out[j] = v;
    }
    return t;
}

Tensor OnnxSource::dequantize(const OnnxEntry& e, std::int64_t first, const Shape& shape) const {
    const QdqWeight& q = m_qdq[static_cast<std::size_t>(e.qdq)];
    const Tensor codes = loadStored(entry(q.codes), first, shape);
    const std::vector<float> scales = load(q.scale).toFloatVector();
    const std::optional<Tensor> zeros = qdqZeroPoints(q.output);
    Tensor out(DType::F32, shape);
    onnxio::dequantizeRange(q, e.info.shape, codes, scales, zeros ? &*zeros : nullptr, first,
                            elementCount(shape), reinterpret_cast<float*>(out.mutableData()));
    return out;
}

std::optional<WeightUse> OnnxSource::weightUse(const std::string& name) const {
    if (const auto it = m_uses.find(name); it != m_uses.end()) return it->second;
    return std::nullopt;
}

const QdqWeight* OnnxSource::qdq(const std::string& name) const {
    const auto it = m_index.find(name);
    if (it == m_index.end() || m_entries[it->second].qdq < 0) return nullptr;
    return &m_qdq[static_cast<std::size_t>(m_entries[it->second].qdq)];
}

const QdqWeight& OnnxSource::requireQdq(const std::string& name) const {
    const QdqWeight* q = qdq(name);
    if (!q)
        throw FileError(m_path + ": " + printable(name) +
                        ": not a DequantizeLinear output over constant inputs");
    return *q;
}

Tensor OnnxSource::qdqCodes(const std::string& name) const {
    return load(requireQdq(name).codes);
}
Tensor OnnxSource::qdqScales(const std::string& name) const {
    return load(requireQdq(name).scale);
}
std::optional<Tensor> OnnxSource::qdqZeroPoints(const std::string& name) const {
    const QdqWeight& q = requireQdq(name);
    if (q.zeroPoint.empty()) return std::nullopt;
    return load(q.zeroPoint);
}

std::unique_ptr<TensorSource> openOnnxSource(const std::string& path) {
    return OnnxSource::open(path);
}

} // namespace ql
