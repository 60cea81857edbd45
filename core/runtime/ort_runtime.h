#pragma once
// ONNX Runtime's C API, loaded at run time with dlopen: QuantLens builds and runs without
// it, and says where to get it when a command needs it. Declared from onnxruntime_c_api.h
// (runtime/ort_abi.h); sessions run with one intra-op thread and no graph optimization, the settings
// under which the output equals onnxruntime-node's bit for bit (spec §3).
#include "tensor/shape.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct OrtApi;
struct OrtEnv;
struct OrtSession;
struct OrtMemoryInfo;

namespace ql {

/// The runtime is missing or unusable, or it refused a model or its inputs. The message says which
/// library and what to do.
class RuntimeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One tensor as ONNX Runtime takes or gives it: an ONNX element type (TensorProto.DataType), a shape
/// and its row-major bytes.
struct HostTensor {
    std::string name;
    std::int32_t type = 1;
    Shape shape;
    std::vector<std::byte> bytes;

    /// The values as doubles (float, double, float16, the integer types and bool); throws
    /// RuntimeError for any other type.
    std::vector<double> toDoubles() const;
};

/// Bytes per element of an ONNX element type QuantLens feeds or reads; 0 for the others.
std::size_t ortElementSize(std::int32_t type);
/// "float32", "int64", ...: the element type's name for messages.
std::string ortTypeName(std::int32_t type);
bool ortIsFloat(std::int32_t type); // float32, float64 or float16

/// A model input or output as the session declares it: dims -1 where dynamic, with their names.
struct TensorDecl {
    std::string name;
    std::int32_t type = 0;
    std::vector<std::int64_t> dims;
    std::vector<std::string> dimNames; // "" for a fixed dim
};

class OrtRuntime;

/// One model loaded from memory. Not thread-safe: one Run at a time.
class OrtModel {
public:
    ~OrtModel();
    OrtModel(const OrtModel&) = delete;
    OrtModel& operator=(const OrtModel&) = delete;

    const std::vector<TensorDecl>& inputs() const { return m_inputs; }
    const std::vector<TensorDecl>& outputs() const { return m_outputs; }
    /// Runs the model on `inputs` (matched by name) and returns the named outputs, in that order.
    /// Throws RuntimeError with the runtime's message (a wrong shape or type among them).
    std::vector<HostTensor> run(const std::vector<HostTensor>& inputs,
                                const std::vector<std::string>& names) const;

private:
    friend class OrtRuntime;
    OrtModel(std::shared_ptr<const OrtRuntime> runtime, OrtSession* session, std::string what);
    std::shared_ptr<const OrtRuntime> m_runtime;
    OrtSession* m_session;
    std::string m_what; // the model, for messages
    std::vector<TensorDecl> m_inputs;
    std::vector<TensorDecl> m_outputs;
};

class OrtRuntime : public std::enable_shared_from_this<OrtRuntime> {
public:
    /// The first library found: $QUANTLENS_ONNXRUNTIME (a file or a folder holding one), a Python
    /// `onnxruntime` package, a Node `onnxruntime-node` package, the system's library path. Loaded once
    /// per process. Throws RuntimeError saying where it looked and how to get it.
    static std::shared_ptr<const OrtRuntime> find();
    /// Loads the library at `path` (never unloaded, spec §1) and checks the version it reports. Throws
    /// RuntimeError when it cannot be opened, is not ONNX Runtime or lacks API version ort::kApiVersion.
    static std::shared_ptr<const OrtRuntime> load(const std::string& path);
    /// The places find() looks, in order, each with the file it would load (for messages and tests).
    static std::vector<std::string> searchPath();
    /// How to get the runtime, in one sentence.
    static std::string howToGet();

    const std::string& path() const { return m_path; }
    const std::string& version() const { return m_version; } // "1.30.0"

    /// Creates a session from model bytes (ONNX Runtime parses them during the call). `what` names the
    /// model in messages. Throws RuntimeError with the runtime's reason when it refuses the model.
    std::unique_ptr<OrtModel> open(const std::string& bytes, const std::string& what) const;

    ~OrtRuntime();
    OrtRuntime(const OrtRuntime&) = delete;
    OrtRuntime& operator=(const OrtRuntime&) = delete;

private:
    friend class OrtModel;
    OrtRuntime() = default;
    template <class Fn> Fn fn(std::size_t slot) const;
    /// Throws RuntimeError "<what>: <runtime's message>" for a non-null status (and releases it).
    void check(void* status, const std::string& what) const;

    std::string m_path;
    std::string m_version;
    const OrtApi* m_api = nullptr;
    OrtEnv* m_env = nullptr;
    OrtMemoryInfo* m_memory = nullptr;
};

} // namespace ql
