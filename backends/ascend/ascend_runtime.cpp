#include "ascend/ascend_runtime.h"

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <map>

namespace ql {
namespace {

std::string envOr(const char* name, const std::string& fallback = {}) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

struct Opened {
    void* handle = nullptr;
    std::string path;
    std::string error; // the most telling dlerror() when nothing opened
};

// Tries `name` in every folder, then (empty folder) through the loader path. A file that exists but
// does not load (missing dependency, wrong architecture) is the error worth reporting.
Opened openFirst(const std::vector<std::string>& dirs, const std::string& name, int flags) {
    Opened result;
    for (const auto& dir : dirs) {
        const std::string path = dir.empty() ? name : (std::filesystem::path(dir) / name).string();
        if (!dir.empty() && !std::filesystem::exists(path)) continue;
        if (void* h = dlopen(path.c_str(), flags)) {
            result.handle = h;
            result.path = path;
            return result;
        }
        const char* err = dlerror();
        if (!dir.empty() || result.error.empty()) result.error = err ? err : "dlopen failed";
    }
    return result;
}

std::string describeDirs(const std::vector<std::string>& dirs) {
    std::string s;
    for (const auto& d : dirs)
        s += (s.empty() ? "" : ", ") + (d.empty() ? std::string("the loader path") : d);
    return s;
}

template <typename Fn>
void resolve(void* handle, const char* symbol, Fn& slot, std::vector<std::string>& missing) {
    dlerror();
    slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!slot) missing.emplace_back(symbol);
}

template <typename Fn> void resolveOptional(void* handle, const char* symbol, Fn& slot) {
    slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

} // namespace

std::vector<std::string> ascendSearchDirs() {
    const std::string overrideDir = envOr("QUANTLENS_ASCEND_LIB_DIR");
    if (!overrideDir.empty()) return {overrideDir};
    std::vector<std::string> dirs;
    for (const char* var : {"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) {
        const std::string home = envOr(var);
        if (!home.empty()) dirs.push_back((std::filesystem::path(home) / "lib64").string());
    }
    dirs.emplace_back("/usr/local/Ascend/ascend-toolkit/latest/lib64"); // CANN's default install prefix
    dirs.emplace_back();                                                // LD_LIBRARY_PATH, ld.so.cache
    return dirs;
}

std::shared_ptr<AscendRuntime> AscendRuntime::load(const std::vector<std::string>& dirs) {
    // One runtime per search configuration for the whole process: aclInit may run only once.
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<AscendRuntime>> loaded;
    std::string key;
    for (const auto& d : dirs)
        key += d + '\n';
    key += envOr("QUANTLENS_ASCEND_ALLOW_STANDIN");
    std::lock_guard lock(mutex);
    if (auto it = loaded.find(key); it != loaded.end()) return it->second;
    auto runtime = std::make_shared<AscendRuntime>();
    runtime->open(dirs);
    // Failures are not cached, so installing CANN (or fixing the path) works without a restart.
    if (!runtime->m_loadError) loaded.emplace(key, runtime);
    return runtime;
}

void AscendRuntime::open(const std::vector<std::string>& dirs) {
    // Opens the first library of `names` found, or records why none was and returns no handle.
    auto require = [&](std::initializer_list<const char*> names) {
        Opened lib;
        std::string tried;
        for (const char* name : names) {
            lib = openFirst(dirs, name, RTLD_NOW | RTLD_GLOBAL);
            if (lib.handle) break;
            tried += std::string(tried.empty() ? "" : " nor ") + name;
        }
        if (lib.handle)
            m_libraries.push_back(lib.path);
        else
            m_loadError = (names.size() > 1 ? "neither " + tried + " found" : tried + " not found") +
                          " (searched " + describeDirs(dirs) + ")" +
                          (lib.error.empty() ? "" : ": " + lib.error);
        return lib;
    };
    // Load order CANN needs: ascendcl and nnopbase GLOBAL so that opapi's own
    // dependencies on them resolve to the copies we opened.
    const Opened acl = require({"libascendcl.so"});
    if (!acl.handle) return;
    const Opened base = require({"libnnopbase.so"});
    if (!base.handle) return;
    // Split op repositories ship libopapi_nn.so; CANN <= 8 has the monolithic libopapi.so. The two
    // must not be mixed (ops-nn op_api_list.md), so the first found is the only one used.
    const Opened ops = require({"libopapi_nn.so", "libopapi.so"});
    if (!ops.handle) return;

    m_standIn = dlsym(acl.handle, "quantlens_ascend_standin") != nullptr;
    if (m_standIn && envOr("QUANTLENS_ASCEND_ALLOW_STANDIN") != "1") {
        // The test double must never pass for a device.
        m_loadError =
            acl.path + " is QuantLens's CPU stand-in for CANN (a test double), not an Ascend runtime";
        return;
    }

    std::vector<std::string> missing;
    resolve(acl.handle, "aclInit", m_api.init, missing);
    resolve(acl.handle, "aclFinalize", m_api.finalize, missing);
    resolve(acl.handle, "aclrtSetDevice", m_api.setDevice, missing);
    resolve(acl.handle, "aclrtResetDevice", m_api.resetDevice, missing);
    resolve(acl.handle, "aclrtCreateStream", m_api.createStream, missing);
    resolve(acl.handle, "aclrtDestroyStream", m_api.destroyStream, missing);
    resolve(acl.handle, "aclrtSynchronizeStream", m_api.synchronizeStream, missing);
    resolve(acl.handle, "aclrtMalloc", m_api.malloc, missing);
    resolve(acl.handle, "aclrtFree", m_api.free, missing);
    resolve(acl.handle, "aclrtMemcpy", m_api.memcpy, missing);
    resolveOptional(acl.handle, "aclrtGetDeviceCount", m_api.getDeviceCount);
    resolveOptional(acl.handle, "aclrtGetSocName", m_api.getSocName);
    resolve(base.handle, "aclCreateTensor", m_api.createTensor, missing);
    resolve(base.handle, "aclDestroyTensor", m_api.destroyTensor, missing);
    resolve(ops.handle, "aclnnQuantizeGetWorkspaceSize", m_api.quantizeWorkspace, missing);
    resolve(ops.handle, "aclnnQuantize", m_api.quantize, missing);
    resolve(ops.handle, "aclnnAscendQuantV3GetWorkspaceSize", m_api.ascendQuantV3Workspace, missing);
    resolve(ops.handle, "aclnnAscendQuantV3", m_api.ascendQuantV3, missing);
    resolve(ops.handle, "aclnnGroupQuantGetWorkspaceSize", m_api.groupQuantWorkspace, missing);
    resolve(ops.handle, "aclnnGroupQuant", m_api.groupQuant, missing);
    if (!missing.empty()) {
        std::string list;
        for (const auto& m : missing)
            list += (list.empty() ? "" : ", ") + m;
        m_loadError = "the CANN libraries lack " + list + " (loaded " + acl.path + ", " + base.path + ", " +
                      ops.path + ")";
    }
}

aclError AscendRuntime::ensureInitialised() {
    std::lock_guard lock(m_initMutex);
    if (!m_initResult) {
        m_initResult = m_api.init(nullptr); // no config file, as in the CANN samples
        // Someone else in the process (torch_npu, another runtime) initialised ACL already: usable,
        // but theirs to finalise.
        m_ownsInit = *m_initResult == acl::kSuccess;
        if (*m_initResult == acl::kRepeatInitialize) m_initResult = acl::kSuccess;
    }
    return *m_initResult;
}

AscendRuntime::~AscendRuntime() {
    if (m_ownsInit && m_api.finalize) m_api.finalize();
}

} // namespace ql
