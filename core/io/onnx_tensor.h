#pragma once
// One ONNX TensorProto (an initializer or a Constant's value) turned into an OnnxEntry: element type,
// shape and byte count checked, the bytes moved out of the message (raw_data), converted from the
// typed fields, or found in an external data file inside the model's folder. Internal to the ONNX
// source; only its .cpp files include the generated protobuf header.
#include "io/onnx_source.h"

#include <filesystem>
#include <map>
#include <memory>
#include <onnx/onnx_pb.h> // onnx-ml.pb.h (ONNX_ML, set by the onnx_proto target)
#include <optional>
#include <string>
#include <vector>

namespace ql::onnxio {

/// How QuantLens holds one ONNX element type.
struct ElementType {
    DType dtype;      // as listed (4-bit integers unpacked to int8 / uint8, one per byte)
    bool packed4;     // stored two a byte in raw_data / external data / int32_data
    const char* name; // for messages and QdqWeight::codeType
};

enum class TypeClass { Supported, Unsupported, Unknown };
/// Supported types map to an ElementType; Unsupported ones (strings, complex, uint16/32/64, the FNUZ
/// fp8 variants, 2-bit integers) are valid ONNX that QuantLens has no type for, and are not listed.
TypeClass classify(int dataType);
std::optional<ElementType> elementType(int dataType);

/// The model file and its folder, and the external data files opened so far (each mapped once).
class ExternalFiles {
public:
    explicit ExternalFiles(const std::string& modelPath);
    /// The mapping of `location` (relative to the model's folder). Throws FileError (naming the
    /// model and `tensor`) when it is absolute, leaves the folder (by "..", or a symlink resolving
    /// outside), or is not a regular file.
    std::shared_ptr<const MappedFile> open(const std::string& location, const std::string& tensor);
    /// Every file opened, in first-use order.
    const std::vector<std::string>& paths() const { return m_paths; }

private:
    std::string m_model;
    std::filesystem::path m_dir;
    std::filesystem::path m_realDir; // canonical, for the symlink check
    std::map<std::string, std::shared_ptr<const MappedFile>> m_open;
    std::vector<std::string> m_paths;
};

/// Checks `t` and builds the entry listed as `name`; the message's raw_data is moved out. Throws
/// FileError "<model>: <name>: <reason>". Returns nullopt for an Unsupported element type.
std::optional<OnnxEntry> decodeTensor(onnx::TensorProto& t, const std::string& name, const std::string& where,
                                      const std::string& model, ExternalFiles& external);

/// A Constant node's value_float(s) / value_int(s) as an entry (f32 or int64, rank 0 or 1).
OnnxEntry floatsEntry(const std::string& name, const std::vector<float>& values, bool scalar);
OnnxEntry intsEntry(const std::string& name, const std::vector<std::int64_t>& values, bool scalar);

} // namespace ql::onnxio
