#pragma once
// Loads CANN at run time (dlopen) and resolves the entry points QuantLens calls.
// No CANN header or library is needed to build; when the libraries are absent the runtime says why.
#include "ascend/acl_abi.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ql {

/// Every entry point, resolved. The two optional ones may be null.
struct AclApi {
    // libascendcl.so
    acl::InitFn init = nullptr;
    acl::FinalizeFn finalize = nullptr;
    acl::SetDeviceFn setDevice = nullptr;
    acl::ResetDeviceFn resetDevice = nullptr;
    acl::CreateStreamFn createStream = nullptr;
    acl::DestroyStreamFn destroyStream = nullptr;
    acl::SynchronizeStreamFn synchronizeStream = nullptr;
    acl::MallocFn malloc = nullptr;
    acl::FreeFn free = nullptr;
    acl::MemcpyFn memcpy = nullptr;
    acl::GetDeviceCountFn getDeviceCount = nullptr; // optional
    acl::GetSocNameFn getSocName = nullptr;         // optional
    // libnnopbase.so
    acl::CreateTensorFn createTensor = nullptr;
    acl::DestroyTensorFn destroyTensor = nullptr;
    // libopapi_nn.so or libopapi.so
    acl::QuantizeWsFn quantizeWorkspace = nullptr;
    acl::RunOpFn quantize = nullptr;
    acl::AscendQuantV3WsFn ascendQuantV3Workspace = nullptr;
    acl::RunOpFn ascendQuantV3 = nullptr;
    acl::GroupQuantWsFn groupQuantWorkspace = nullptr;
    acl::RunOpFn groupQuant = nullptr;
};

/// Where to look, from the environment: QUANTLENS_ASCEND_LIB_DIR alone when set (tests), else
/// $ASCEND_HOME_PATH/lib64, $ASCEND_TOOLKIT_HOME/lib64, the default toolkit folder, then the
/// dynamic loader's own path (an empty entry).
std::vector<std::string> ascendSearchDirs();

class AscendRuntime {
public:
    /// Loads from `dirs` (the same folders give the same runtime: CANN is initialised once per
    /// process). Never throws: a failure is reported by loadError().
    static std::shared_ptr<AscendRuntime> load(const std::vector<std::string>& dirs);

    /// Why the libraries could not be used; nullopt when every entry point resolved.
    const std::optional<std::string>& loadError() const { return m_loadError; }
    const AclApi& api() const { return m_api; }
    /// The files actually opened, in load order.
    const std::vector<std::string>& libraries() const { return m_libraries; }
    /// True when the libraries are QuantLens's CPU test double (tests/ascend_standin), not CANN.
    bool isStandIn() const { return m_standIn; }

    /// aclInit(NULL), once per runtime; later calls return the first result. An ACL already
    /// initialised by someone else in the process (ACL_ERROR_REPEAT_INITIALIZE) counts as success.
    aclError ensureInitialised();

    AscendRuntime() = default;
    AscendRuntime(const AscendRuntime&) = delete;
    AscendRuntime& operator=(const AscendRuntime&) = delete;
    /// aclFinalize when aclInit succeeded. The libraries stay mapped: CANN registers exit
    /// handlers of its own, and unmapping it under them crashes at process exit.
    ~AscendRuntime();

private:
    void open(const std::vector<std::string>& dirs);

    AclApi m_api;
    std::optional<std::string> m_loadError;
    std::vector<std::string> m_libraries;
    bool m_standIn = false;
    std::mutex m_initMutex;
    std::optional<aclError> m_initResult;
    bool m_ownsInit = false;
};

} // namespace ql
