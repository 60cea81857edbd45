#pragma once
// An ONNX model's bytes, rewritten for a run: weights replaced by other values (their quantized-then-
// dequantized ones) and node outputs added as graph outputs. ONNX Runtime can override a graph
// initializer through its API but not a Constant node's value, and it has no call that exposes an
// intermediate value: both happen here, in the ModelProto, with the ONNX
// project's protobuf classes. Only the main graph is rewritten: subgraph weights stay as they are.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ql {

/// One node of the main graph.
struct ModelNode {
    std::string name; // may be empty
    std::string opType;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;         // empty names (omitted optional outputs) left out
    std::map<std::string, std::int64_t> ints; // its integer attributes ("transA", "group", ...)
};

class ModelRewriter {
public:
    /// Parses the model file. Throws FileError naming it when it cannot be read, is not ONNX, or keeps
    /// weights in external data files (not supported by the rewrite yet), and in a build without ONNX.
    explicit ModelRewriter(const std::string& path);
    ~ModelRewriter();
    ModelRewriter(const ModelRewriter&) = delete;
    ModelRewriter& operator=(const ModelRewriter&) = delete;

    /// The file's bytes, unchanged.
    const std::string& original() const { return m_bytes; }
    /// float32 weights of the main graph that can be replaced: initializers and Constant nodes' tensor
    /// values, by name (the Constant's output), in file order.
    const std::vector<std::string>& weights() const { return m_weights; }
    /// The main graph's nodes, in file order.
    const std::vector<ModelNode>& nodes() const { return m_nodes; }
    const std::vector<std::string>& graphOutputs() const { return m_outputs; }

    /// The model with each named weight holding the given float32 values (as many as it has elements)
    /// and `extraOutputs` appended after the graph's own outputs. Throws QuantError for a name that is
    /// not a replaceable weight or a count that does not match.
    std::string rewrite(const std::map<std::string, const std::vector<float>*>& replacements,
                        const std::vector<std::string>& extraOutputs) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    std::string m_bytes;
    std::vector<std::string> m_weights;
    std::vector<ModelNode> m_nodes;
    std::vector<std::string> m_outputs;
};

} // namespace ql
