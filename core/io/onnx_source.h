#pragma once
// ONNX models (.onnx) as a TensorSource, read with the ONNX project's own protobuf classes. Listed:
// the initializers of the graph and of every subgraph (If / Loop / Scan bodies), Constant nodes, and
// for each DequantizeLinear whose input is a constant (a QDQ weight) a float tensor under the node's
// output name holding what DequantizeLinear computes; its codes, scales and zero points stay
// listed under their own names. Subgraph tensors are named as scripts/convert_onnx.py names them:
// "<node name or OpType_index>/<attribute>/[<k>/]<tensor>".
//
// Memory: protobuf has no lazy fields, so the bytes stored inside the .onnx file are held once, in
// the strings protobuf parsed them into (moved out of the message, never copied); tensors borrow
// them. External data files (what models past protobuf's 2 GiB limit use) are memory-mapped and
// read lazily, and `release` gives their pages back.
#include "io/tensor_source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ql {

class MappedFile;

/// A weight stored quantized behind DequantizeLinear: y = (x - zero_point) * scale, in f32.
struct QdqWeight {
    enum class Scheme { PerTensor, PerAxis, Blocked };
    std::string output;    // the DequantizeLinear output: the float tensor the source lists
    std::string codes;     // x, as listed (int4/uint4 codes are listed unpacked as int8/uint8)
    std::string scale;     // as listed
    std::string zeroPoint; // as listed; empty when the node has none (zero)
    std::string codeType;  // the ONNX element type of x: "int8", "uint8", "int4", "fp8-e4m3", ...
    Scheme scheme = Scheme::PerTensor;
    int axis = 0;               // the dimension scales run along (normalised, >= 0); 0 for per-tensor
    std::int64_t blockSize = 0; // Blocked: elements along `axis` sharing one scale; 0 otherwise
    /// "per-tensor", "per-axis 0", "block 32 along axis 1".
    std::string schemeText() const {
        switch (scheme) {
        case Scheme::PerTensor:
            return "per-tensor";
        case Scheme::PerAxis:
            return "per-axis " + std::to_string(axis);
        case Scheme::Blocked:
            return "block " + std::to_string(blockSize) + " along axis " + std::to_string(axis);
        }
        return {};
    }
};

/// Opens an ONNX model. Throws FileError naming the file, the tensor and the reason; a build without
/// ONNX support throws saying so.
std::unique_ptr<TensorSource> openOnnxSource(const std::string& path);
/// The QDQ description of `name` when `source` is an ONNX model and `name` a DequantizeLinear output;
/// nullptr otherwise (and always in a build without ONNX support): source.qdq(name).
inline const QdqWeight* findQdqWeight(const TensorSource& source, const std::string& name) {
    return source.qdq(name);
}

/// Internal to the ONNX source: where one listed tensor's values come from.
struct OnnxEntry {
    TensorInfo info;
    std::shared_ptr<const std::string> bytes;   // in memory (raw_data moved out, or typed fields)
    std::shared_ptr<const MappedFile> external; // or in an external data file
    std::uint64_t offset = 0;                   // ... at this offset
    bool packed4 = false;                       // two 4-bit values a byte, low nibble first: unpacked on load
    int dataType = 0;                           // ONNX TensorProto.DataType; 0 for a DequantizeLinear output
    int qdq = -1; // index into the QDQ list when the tensor is a DequantizeLinear output
};

class OnnxSource : public TensorSource {
public:
    /// Parses the model and checks every tensor (types, shapes, byte counts, external files).
    static std::unique_ptr<OnnxSource> open(const std::string& path);

    const std::string& path() const override { return m_path; }
    std::vector<std::string> files() const override;
    const std::vector<TensorInfo>& tensors() const override { return m_infos; }
    /// Initializers and Constant values of element types QuantLens does not read (strings, complex),
    /// with their type.
    const std::vector<UnlistedEntry>& unlisted() const override { return m_unlisted; }
    Tensor load(const std::string& name) const override;
    Tensor loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const override;
    void release(const std::string& name) const override;
    /// The first node consuming the tensor (its operator, input index, Gemm's transB, Conv's group).
    std::optional<WeightUse> weightUse(const std::string& name) const override;

    /// nullptr unless `name` is a DequantizeLinear output over constant inputs.
    const QdqWeight* qdq(const std::string& name) const override;
    /// A QDQ weight's integer codes, scales and zero points; else as any source.
    std::optional<StoredQuantization> storedCodes(const std::string& name, std::string* why) const override;
    /// Every QDQ weight, in file order.
    const std::vector<QdqWeight>& qdqWeights() const { return m_qdq; }
    /// IR version, producer, domain, model version, each opset (default domain as "ai.onnx") and
    /// the model's metadata_props, in file order.
    std::vector<ModelInfoEntry> modelInfo() const override { return m_modelInfo; }
    /// A QDQ weight's parts, loaded (4-bit codes unpacked, one per byte); nullopt when it has no zero
    /// point. Throw FileError when `name` is not a QDQ weight.
    Tensor qdqCodes(const std::string& name) const;
    Tensor qdqScales(const std::string& name) const;
    std::optional<Tensor> qdqZeroPoints(const std::string& name) const;

private:
    friend class OnnxGraphReader;
    OnnxSource() = default;
    const OnnxEntry& entry(const std::string& name) const;
    const QdqWeight& requireQdq(const std::string& name) const;
    // Elements from `firstElement` on, as many as `shape` holds, given that shape.
    Tensor loadStored(const OnnxEntry& e, std::int64_t firstElement, const Shape& shape) const;
    Tensor dequantize(const OnnxEntry& e, std::int64_t firstElement, const Shape& shape) const;

    std::string m_path;
    std::vector<OnnxEntry> m_entries;
    std::vector<TensorInfo> m_infos;
    std::unordered_map<std::string, std::size_t> m_index;
    std::vector<QdqWeight> m_qdq;
    std::vector<std::string> m_externalFiles;
    std::vector<UnlistedEntry> m_unlisted;
    std::vector<ModelInfoEntry> m_modelInfo;
    std::unordered_map<std::string, WeightUse> m_uses; // listed name -> its first consumer
};

} // namespace ql
