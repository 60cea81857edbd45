#include "runtime/ort_runtime.h"

#include "runtime/ort_abi.h"
#include "tensor/float_formats.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <mutex>

namespace ql {
namespace fs = std::filesystem;
namespace {

constexpr const char* kEnvVar = "QUANTLENS_ONNXRUNTIME";
constexpr const char* kNodeLib = "onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1";

template <class T> T read(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The library in a folder: the versioned name first (the one packages ship), then the plain one.
std::string libraryIn(const fs::path& dir) {
    std::error_code ec;
    for (const char* name : {"libonnxruntime.so.1", "libonnxruntime.so"})
        if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
    // Python wheels name it with the full version: libonnxruntime.so.1.30.0.
    if (fs::is_directory(dir, ec))
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().filename().string().rfind("libonnxruntime.so.", 0) == 0) return e.path().string();
    return {};
}

void splitInto(std::vector<fs::path>& out, const char* list) {
    if (!list) return;
    std::string s = list;
    for (std::size_t b = 0; b <= s.size();) {
        const std::size_t e = std::min(s.find(':', b), s.size());
        if (e > b) out.emplace_back(s.substr(b, e - b));
        b = e + 1;
    }
}

// site-packages / dist-packages folders a Python `onnxruntime` may be installed in.
std::vector<fs::path> pythonFolders() {
    std::vector<fs::path> roots;
    splitInto(roots, std::getenv("PYTHONPATH"));
    std::vector<fs::path> prefixes;
    if (const char* venv = std::getenv("VIRTUAL_ENV")) prefixes.emplace_back(venv);
    if (const char* home = std::getenv("HOME")) prefixes.emplace_back(fs::path(home) / ".local");
    prefixes.emplace_back("/usr/local");
    prefixes.emplace_back("/usr");
    std::error_code ec;
    for (const auto& prefix : prefixes) {
        const fs::path lib = prefix / "lib";
        if (!fs::is_directory(lib, ec)) continue;
        for (const auto& e : fs::directory_iterator(lib, ec)) {
            const std::string n = e.path().filename().string();
            if (n.rfind("python3", 0) != 0) continue;
            roots.push_back(e.path() / "site-packages");
            roots.push_back(e.path() / "dist-packages");
        }
    }
    return roots;
}

// node_modules folders a Node `onnxruntime-node` may be installed in: NODE_PATH, the current folder
// and each above it, the global ones.
std::vector<fs::path> nodeFolders() {
    std::vector<fs::path> roots;
    splitInto(roots, std::getenv("NODE_PATH"));
    std::error_code ec;
    for (fs::path p = fs::current_path(ec); !p.empty(); p = p.parent_path()) {
        roots.push_back(p / "node_modules");
        if (p == p.parent_path()) break;
    }
    if (const char* home = std::getenv("HOME"))
        roots.push_back(fs::path(home) / ".npm-global/lib/node_modules");
    roots.emplace_back("/usr/local/lib/node_modules");
    roots.emplace_back("/usr/lib/node_modules");
    return roots;
}

} // namespace

std::size_t ortElementSize(std::int32_t type) {
    switch (type) {
    case ort::kFloat:
    case ort::kInt32:
        return 4;
    case ort::kDouble:
    case ort::kInt64:
        return 8;
    case ort::kFloat16:
    case ort::kInt16:
    case ort::kUInt16:
        return 2;
    case ort::kInt8:
    case ort::kUInt8:
    case ort::kBool:
        return 1;
    default:
        return 0;
    }
}

std::string ortTypeName(std::int32_t type) {
    switch (type) {
    case ort::kFloat:
        return "float32";
    case ort::kDouble:
        return "float64";
    case ort::kFloat16:
        return "float16";
    case ort::kInt64:
        return "int64";
    case ort::kInt32:
        return "int32";
    case ort::kInt16:
        return "int16";
    case ort::kUInt16:
        return "uint16";
    case ort::kInt8:
        return "int8";
    case ort::kUInt8:
        return "uint8";
    case ort::kBool:
        return "bool";
    default:
        return "ONNX element type " + std::to_string(type);
    }
}

bool ortIsFloat(std::int32_t type) {
    return type == ort::kFloat || type == ort::kDouble || type == ort::kFloat16;
}

std::vector<double> HostTensor::toDoubles() const {
    const std::size_t size = ortElementSize(type);
    if (size == 0) throw RuntimeError(name + ": " + ortTypeName(type) + " values are not read");
    const std::size_t n = bytes.size() / size;
    std::vector<double> out(n);
    const std::byte* p = bytes.data();
    for (std::size_t i = 0; i < n; ++i, p += size) {
        switch (type) {
        case ort::kFloat:
            out[i] = read<float>(p);
            break;
        case ort::kDouble:
            out[i] = read<double>(p);
            break;
        case ort::kFloat16:
            out[i] = halfToFloat(read<std::uint16_t>(p));
            break;
        case ort::kInt64:
            out[i] = static_cast<double>(read<std::int64_t>(p));
            break;
        case ort::kInt32:
            out[i] = read<std::int32_t>(p);
            break;
        case ort::kInt16:
            out[i] = read<std::int16_t>(p);
            break;
        case ort::kUInt16:
            out[i] = read<std::uint16_t>(p);
            break;
        case ort::kInt8:
            out[i] = read<std::int8_t>(p);
            break;
        default:
            out[i] = read<std::uint8_t>(p);
            break; // uint8, bool
        }
    }
    return out;
}

std::vector<std::string> OrtRuntime::searchPath() {
    std::vector<std::string> out;
    if (const char* env = std::getenv(kEnvVar); env && *env)
        out.push_back(std::string("$") + kEnvVar + "=" + env);
    for (const auto& root : pythonFolders())
        if (const std::string lib = libraryIn(root / "onnxruntime/capi"); !lib.empty()) out.push_back(lib);
    std::error_code ec;
    for (const auto& root : nodeFolders())
        if (fs::is_regular_file(root / kNodeLib, ec)) out.push_back((root / kNodeLib).string());
    out.emplace_back("libonnxruntime.so.1 on the system library path");
    return out;
}

std::string OrtRuntime::howToGet() {
    return "get ONNX Runtime with scripts/setup-onnxruntime.sh (npm's onnxruntime-node@1.30.0, unpacked "
           "under "
           "build/onnxruntime), `pip install onnxruntime` or `npm install onnxruntime-node`, or point " +
           std::string(kEnvVar) + " at a libonnxruntime.so.1";
}

std::shared_ptr<const OrtRuntime> OrtRuntime::find() {
    static std::mutex mutex;
    static std::shared_ptr<const OrtRuntime> found;
    std::lock_guard lock(mutex);
    if (found) return found;
    // An explicit choice is the only one tried: a wrong path must not quietly load another library.
    if (const char* env = std::getenv(kEnvVar); env && *env) {
        std::error_code ec;
        std::string path = env;
        if (fs::is_directory(path, ec)) {
            path = libraryIn(path);
            if (path.empty())
                throw RuntimeError(std::string(kEnvVar) + "=" + env +
                                   ": the folder holds no libonnxruntime.so*; " + howToGet());
        } else if (!fs::exists(path, ec)) {
            throw RuntimeError(std::string(kEnvVar) + "=" + env + ": no such file; " + howToGet());
        }
        return found = load(path);
    }
    for (const auto& root : pythonFolders())
        if (const std::string lib = libraryIn(root / "onnxruntime/capi"); !lib.empty())
            return found = load(lib);
    std::error_code ec;
    for (const auto& root : nodeFolders())
        if (fs::is_regular_file(root / kNodeLib, ec)) return found = load((root / kNodeLib).string());
    for (const char* name : {"libonnxruntime.so.1", "libonnxruntime.so"})
        if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
            dlclose(h); // opened again, and kept, by load
            return found = load(name);
        }
    throw RuntimeError(
        "ONNX Runtime was not found ($" + std::string(kEnvVar) +
        " unset, no Python onnxruntime or Node onnxruntime-node package, no libonnxruntime.so.1 on "
        "the library path); " +
        howToGet());
}

std::shared_ptr<const OrtRuntime> OrtRuntime::load(const std::string& path) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); // never closed (spec §1)
    if (!handle) {
        const char* why = dlerror();
        throw RuntimeError(path + ": cannot be loaded (" + std::string(why ? why : "dlopen failed") + "); " +
                           howToGet());
    }
    const auto getBase = reinterpret_cast<OrtGetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
    if (!getBase)
        throw RuntimeError(path + ": not ONNX Runtime (it exports no OrtGetApiBase); " + howToGet());
    const OrtApiBase* base = getBase();
    if (!base || !base->GetApi || !base->GetVersionString)
        throw RuntimeError(path + ": OrtGetApiBase returned no API");
    std::shared_ptr<OrtRuntime> rt(new OrtRuntime);
    rt->m_path = path;
    const char* version = base->GetVersionString();
    rt->m_version = version ? version : "";
    // The API version is the minor version (spec §1); GetApi returns NULL for one the library lacks.
    unsigned major = 0, minor = 0;
    const bool parsed = std::sscanf(rt->m_version.c_str(), "%u.%u", &major, &minor) == 2;
    if (!parsed || major != 1 || minor < ort::kApiVersion)
        throw RuntimeError(path + ": ONNX Runtime reports version '" + rt->m_version +
                           "'; QuantLens needs 1." + std::to_string(ort::kApiVersion) +
                           " or later (C API version " + std::to_string(ort::kApiVersion) + "); " +
                           howToGet());
    rt->m_api = base->GetApi(ort::kApiVersion);
    if (!rt->m_api)
        throw RuntimeError(path + ": ONNX Runtime " + rt->m_version + " does not offer C API version " +
                           std::to_string(ort::kApiVersion) + "; " + howToGet());
    rt->check(rt->fn<ort::CreateEnvFn>(ort::kCreateEnv)(ort::kLoggingLevelError, "quantlens", &rt->m_env),
              path + ": CreateEnv");
    rt->check(rt->fn<ort::CreateCpuMemoryInfoFn>(ort::kCreateCpuMemoryInfo)(
                  ort::kArenaAllocator, ort::kMemTypeDefault, &rt->m_memory),
              path + ": CreateCpuMemoryInfo");
    return rt;
}

OrtRuntime::~OrtRuntime() {
    if (m_memory) fn<ort::ReleaseFn<OrtMemoryInfo>>(ort::kReleaseMemoryInfo)(m_memory);
    if (m_env) fn<ort::ReleaseFn<OrtEnv>>(ort::kReleaseEnv)(m_env); // after every session (they hold us)
}

template <class Fn> Fn OrtRuntime::fn(std::size_t slot) const {
    // Slot i is the function pointer at byte offset 8*i (spec §2).
    void* p;
    std::memcpy(&p, reinterpret_cast<const char*>(m_api) + slot * sizeof(void*), sizeof p);
    return reinterpret_cast<Fn>(p);
}

void OrtRuntime::check(void* status, const std::string& what) const {
    if (!status) return;
    auto* s = static_cast<OrtStatus*>(status);
    const char* message = fn<ort::GetErrorMessageFn>(ort::kGetErrorMessage)(s);
    std::string text = what + ": " + (message ? message : "failed");
    fn<ort::ReleaseFn<OrtStatus>>(ort::kReleaseStatus)(s);
    throw RuntimeError(text);
}

namespace {

// Releases an ONNX Runtime object at scope exit.
template <class T> struct Owned {
    T* p = nullptr;
    void (*release)(T*);
    ~Owned() {
        if (p) release(p);
    }
};

} // namespace

std::unique_ptr<OrtModel> OrtRuntime::open(const std::string& bytes, const std::string& what) const {
    OrtSessionOptions* options = nullptr;
    check(fn<ort::CreateSessionOptionsFn>(ort::kCreateSessionOptions)(&options),
          what + ": CreateSessionOptions");
    const Owned<OrtSessionOptions> ownOptions{
        options, fn<ort::ReleaseFn<OrtSessionOptions>>(ort::kReleaseSessionOptions)};
    // One intra-op thread and no graph optimization: onnxruntime-node's output bit for bit (spec §3).
    check(fn<ort::SetIntraOpNumThreadsFn>(ort::kSetIntraOpNumThreads)(options, 1),
          what + ": SetIntraOpNumThreads");
    check(fn<ort::SetGraphOptimizationLevelFn>(ort::kSetSessionGraphOptimizationLevel)(options,
                                                                                       ort::kDisableAll),
          what + ": SetSessionGraphOptimizationLevel");
    check(fn<ort::AddSessionConfigEntryFn>(ort::kAddSessionConfigEntry)(
              options, "session.intra_op.allow_spinning", "0"),
          what + ": AddSessionConfigEntry");
    OrtSession* session = nullptr;
    check(fn<ort::CreateSessionFromArrayFn>(ort::kCreateSessionFromArray)(m_env, bytes.data(), bytes.size(),
                                                                          options, &session),
          what + ": ONNX Runtime " + m_version + " refuses the model");
    return std::unique_ptr<OrtModel>(new OrtModel(shared_from_this(), session, what));
}

OrtModel::OrtModel(std::shared_ptr<const OrtRuntime> runtime, OrtSession* session, std::string what)
    : m_runtime(std::move(runtime))
    , m_session(session)
    , m_what(std::move(what)) {
    const OrtRuntime& rt = *m_runtime;
    try {
        OrtAllocator* allocator = nullptr;
        rt.check(
            rt.fn<ort::GetAllocatorWithDefaultOptionsFn>(ort::kGetAllocatorWithDefaultOptions)(&allocator),
            m_what);
        for (const bool input : {true, false}) {
            std::size_t count = 0;
            rt.check(rt.fn<ort::SessionGetCountFn>(input ? ort::kSessionGetInputCount
                                                         : ort::kSessionGetOutputCount)(m_session, &count),
                     m_what);
            auto& list = input ? m_inputs : m_outputs;
            for (std::size_t i = 0; i < count; ++i) {
                TensorDecl d;
                char* name = nullptr;
                rt.check(rt.fn<ort::SessionGetNameFn>(input ? ort::kSessionGetInputName
                                                            : ort::kSessionGetOutputName)(m_session, i,
                                                                                          allocator, &name),
                         m_what);
                d.name = name;
                rt.check(rt.fn<ort::AllocatorFreeFn>(ort::kAllocatorFree)(allocator, name), m_what);
                OrtTypeInfo* info = nullptr;
                rt.check(rt.fn<ort::SessionGetTypeInfoFn>(input ? ort::kSessionGetInputTypeInfo
                                                                : ort::kSessionGetOutputTypeInfo)(m_session,
                                                                                                  i, &info),
                         m_what);
                const Owned<OrtTypeInfo> ownInfo{info,
                                                 rt.fn<ort::ReleaseFn<OrtTypeInfo>>(ort::kReleaseTypeInfo)};
                const OrtTensorTypeAndShapeInfo* tensor = nullptr;
                rt.check(
                    rt.fn<ort::CastTypeInfoToTensorInfoFn>(ort::kCastTypeInfoToTensorInfo)(info, &tensor),
                    m_what);
                if (tensor) { // NULL for sequences and maps: listed with type 0
                    rt.check(rt.fn<ort::GetTensorElementTypeFn>(ort::kGetTensorElementType)(tensor, &d.type),
                             m_what);
                    std::size_t rank = 0;
                    rt.check(rt.fn<ort::GetDimensionsCountFn>(ort::kGetDimensionsCount)(tensor, &rank),
                             m_what);
                    d.dims.resize(rank);
                    std::vector<const char*> names(rank, nullptr);
                    rt.check(rt.fn<ort::GetDimensionsFn>(ort::kGetDimensions)(tensor, d.dims.data(), rank),
                             m_what);
                    rt.check(rt.fn<ort::GetSymbolicDimensionsFn>(ort::kGetSymbolicDimensions)(
                                 tensor, names.data(), rank),
                             m_what);
                    for (const char* n : names)
                        d.dimNames.emplace_back(n ? n : "");
                }
                list.push_back(std::move(d));
            }
        }
    } catch (...) {
        rt.fn<ort::ReleaseFn<OrtSession>>(ort::kReleaseSession)(m_session);
        throw;
    }
}

OrtModel::~OrtModel() {
    m_runtime->fn<ort::ReleaseFn<OrtSession>>(ort::kReleaseSession)(m_session);
}

std::vector<HostTensor> OrtModel::run(const std::vector<HostTensor>& inputs,
                                      const std::vector<std::string>& names) const {
    const OrtRuntime& rt = *m_runtime;
    const auto releaseValue = rt.fn<ort::ReleaseFn<OrtValue>>(ort::kReleaseValue);
    std::vector<OrtValue*> in(inputs.size(), nullptr), out(names.size(), nullptr);
    struct Values { // every value this run made, released however it ends
        std::vector<OrtValue*>& a;
        std::vector<OrtValue*>& b;
        void (*release)(OrtValue*);
        ~Values() {
            for (auto* v : a)
                release(v);
            for (auto* v : b)
                release(v);
        }
    } guard{in, out, releaseValue};
    std::vector<const char*> inNames, outNames;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const HostTensor& t = inputs[i];
        // The runtime only reads inputs; its prototype takes a non-const pointer (spec §3, slot 49).
        rt.check(rt.fn<ort::CreateTensorWithDataFn>(ort::kCreateTensorWithDataAsOrtValue)(
                     rt.m_memory, const_cast<std::byte*>(t.bytes.data()), t.bytes.size(), t.shape.data(),
                     t.shape.size(), t.type, &in[i]),
                 m_what + ": input '" + t.name + "' (" + ortTypeName(t.type) + " " + toString(t.shape) + ")");
        inNames.push_back(t.name.c_str());
    }
    for (const auto& n : names)
        outNames.push_back(n.c_str());
    rt.check(rt.fn<ort::RunFn>(ort::kRun)(m_session, nullptr, inNames.data(), in.data(), in.size(),
                                          outNames.data(), outNames.size(), out.data()),
             m_what + ": ONNX Runtime failed to run it");
    std::vector<HostTensor> results;
    results.reserve(out.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
        HostTensor t;
        t.name = names[k];
        ort::OnnxType kind = 0;
        rt.check(rt.fn<ort::GetValueTypeFn>(ort::kGetValueType)(out[k], &kind), m_what);
        if (kind != ort::kTypeTensor) {
            t.type = 0; // a sequence or map: named, not read
            results.push_back(std::move(t));
            continue;
        }
        OrtTensorTypeAndShapeInfo* info = nullptr;
        rt.check(rt.fn<ort::GetTensorTypeAndShapeFn>(ort::kGetTensorTypeAndShape)(out[k], &info), m_what);
        const Owned<OrtTensorTypeAndShapeInfo> ownInfo{
            info, rt.fn<ort::ReleaseFn<OrtTensorTypeAndShapeInfo>>(ort::kReleaseTensorTypeAndShapeInfo)};
        rt.check(rt.fn<ort::GetTensorElementTypeFn>(ort::kGetTensorElementType)(info, &t.type), m_what);
        std::size_t rank = 0;
        rt.check(rt.fn<ort::GetDimensionsCountFn>(ort::kGetDimensionsCount)(info, &rank), m_what);
        t.shape.resize(rank);
        rt.check(rt.fn<ort::GetDimensionsFn>(ort::kGetDimensions)(info, t.shape.data(), rank), m_what);
        const std::size_t size = ortElementSize(t.type);
        if (size > 0) {
            void* data = nullptr;
            rt.check(rt.fn<ort::GetTensorMutableDataFn>(ort::kGetTensorMutableData)(out[k], &data), m_what);
            const std::size_t bytes = static_cast<std::size_t>(elementCount(t.shape)) * size;
            t.bytes.resize(bytes);
            if (bytes) std::memcpy(t.bytes.data(), data, bytes);
        }
        results.push_back(std::move(t));
    }
    return results;
}

} // namespace ql
