#include "runtime/model_rewrite.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/printable.h"

#include <climits>
#include <cstring>
#include <onnx/onnx_pb.h>
#include <unordered_map>

namespace ql {

struct ModelRewriter::Impl {
    // Mutable: a rewrite sets the replacements, serializes, and puts the originals back.
    mutable onnx::ModelProto model;
    std::unordered_map<std::string, onnx::TensorProto*> weights;
};

ModelRewriter::ModelRewriter(const std::string& path)
    : m_impl(std::make_unique<Impl>()) {
    requireRegularFile(path);
    {
        const auto file = MappedFile::open(path);
        if (file->size() > static_cast<std::uint64_t>(INT_MAX))
            throw FileError(path + ": past protobuf's 2 GiB limit for one message");
        m_bytes.assign(reinterpret_cast<const char*>(file->data()), file->size());
    }
    if (!m_impl->model.ParseFromString(m_bytes) || !m_impl->model.has_graph())
        throw FileError(path + ": not a valid ONNX model");
    onnx::GraphProto& graph = *m_impl->model.mutable_graph();
    auto addWeight = [&](onnx::TensorProto& t, const std::string& name) {
        if (t.data_location() == onnx::TensorProto::EXTERNAL)
            throw FileError(path + ": " + printable(name) +
                            ": weights in external data files cannot be rewritten for a run yet");
        if (t.data_type() != onnx::TensorProto::FLOAT || name.empty()) return;
        if (m_impl->weights.emplace(name, &t).second) m_weights.push_back(name);
    };
    for (auto& init : *graph.mutable_initializer())
        addWeight(init, init.name());
    for (auto& node : *graph.mutable_node()) {
        ModelNode n{node.name(), node.op_type(), {node.input().begin(), node.input().end()}, {}, {}};
        for (const auto& o : node.output())
            if (!o.empty()) n.outputs.push_back(o);
        for (const auto& a : node.attribute())
            if (a.type() == onnx::AttributeProto::INT) n.ints[a.name()] = a.i();
        if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx") &&
            node.output_size() > 0)
            for (auto& a : *node.mutable_attribute())
                if (a.name() == "value" && a.has_t()) addWeight(*a.mutable_t(), node.output(0));
        m_nodes.push_back(std::move(n));
    }
    for (const auto& o : graph.output())
        m_outputs.push_back(o.name());
}

ModelRewriter::~ModelRewriter() = default;

std::string ModelRewriter::rewrite(const std::map<std::string, const std::vector<float>*>& replacements,
                                   const std::vector<std::string>& extraOutputs) const {
    onnx::GraphProto& graph = *m_impl->model.mutable_graph();
    std::vector<std::pair<onnx::TensorProto*, onnx::TensorProto>> saved;
    auto restore = [&] {
        for (auto& [t, original] : saved)
            t->Swap(&original);
        for (std::size_t k = 0; k < extraOutputs.size() && graph.output_size() > 0; ++k)
            graph.mutable_output()->RemoveLast();
    };
    std::string bytes;
    try {
        for (const auto& [name, values] : replacements) {
            const auto it = m_impl->weights.find(name);
            if (it == m_impl->weights.end())
                throw QuantError(printable(name) + ": not a float32 weight of the model's main graph");
            onnx::TensorProto* t = it->second;
            std::int64_t count = 1;
            for (const auto d : t->dims())
                count *= d;
            if (static_cast<std::int64_t>(values->size()) != count)
                throw QuantError(printable(name) + ": " + std::to_string(values->size()) +
                                 " values for a tensor of " + std::to_string(count));
            onnx::TensorProto replaced;
            replaced.CopyFrom(*t); // name, dims, type, doc: everything but the values
            replaced.clear_float_data();
            replaced.set_raw_data(values->data(), values->size() * sizeof(float)); // little-endian (x86-64)
            saved.emplace_back(t, std::move(replaced));
            t->Swap(&saved.back().second);
        }
        for (const auto& name : extraOutputs)
            graph.add_output()->set_name(name); // by name only: the runtime gives type, the value the shape
        bytes = m_impl->model.SerializeAsString();
    } catch (...) {
        restore();
        throw;
    }
    restore();
    return bytes;
}

} // namespace ql
