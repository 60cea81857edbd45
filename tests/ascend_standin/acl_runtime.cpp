// Stand-in libascendcl.so: aclInit, device, stream and memory calls, plus the test hooks.
#include "standin_state.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace qlstandin;

namespace qlstandin {

namespace {

// QL_STANDIN_FAIL="call:nth:code[,call:nth:code...]" arms failures from the environment.
void armFromEnvironment(State& s) {
    const char* env = std::getenv("QL_STANDIN_FAIL");
    if (!env) return;
    std::string spec(env);
    std::size_t pos = 0;
    while (pos < spec.size()) {
        std::size_t end = spec.find(',', pos);
        if (end == std::string::npos) end = spec.size();
        const std::string item = spec.substr(pos, end - pos);
        const auto a = item.find(':'), b = item.rfind(':');
        if (a != std::string::npos && b != a)
            s.failures.push_back({item.substr(0, a), std::atol(item.substr(a + 1, b - a - 1).c_str()),
                                  std::atoi(item.substr(b + 1).c_str())});
        pos = end + 1;
    }
}

} // namespace

State& state() {
    static State* s = [] {
        auto* created = new State; // leaked on purpose: outlives every static destructor
        armFromEnvironment(*created);
        return created;
    }();
    return *s;
}

int enter(const std::string& call, const std::string& details) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const long n = ++s.calls[call];
    s.log.push_back(details.empty() ? call : call + " " + details);
    for (auto it = s.failures.begin(); it != s.failures.end(); ++it) {
        if (it->call != call) continue;
        if (--it->nth > 0) continue;
        const int code = it->code;
        s.failures.erase(it);
        s.log.push_back("  ! injected failure " + std::to_string(code) + " (call " + std::to_string(n) + ")");
        return code;
    }
    return 0;
}

int refuse(int code, const std::string& why) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.lastError = why;
    s.log.push_back("  ! " + why);
    return code;
}

bool isDeviceRange(const void* p, std::size_t bytes) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    auto it = s.allocations.upper_bound(addr);
    if (it == s.allocations.begin()) return false;
    --it;
    return addr >= it->first && addr + bytes <= it->first + it->second;
}

std::string formatDims(const std::int64_t* dims, std::uint64_t n) {
    std::string out = "[";
    for (std::uint64_t i = 0; i < n; ++i)
        out += (i ? "," : "") + std::to_string(dims[i]);
    return out + "]";
}

} // namespace qlstandin

// Lets a loader tell the test double from CANN; QuantLens refuses it unless told it is a test.
QL_STANDIN_EXPORT const int quantlens_ascend_standin = 1;

QL_STANDIN_EXPORT int aclInit(const char* configPath) {
    if (int e = enter("aclInit", configPath ? std::string("config=") + configPath : "config=null")) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.initialised) return refuse(ErrRepeatInit, "aclInit called twice");
    s.initialised = true;
    return 0;
}

QL_STANDIN_EXPORT int aclFinalize() {
    if (int e = enter("aclFinalize")) return e;
    state().initialised = false;
    return 0;
}

QL_STANDIN_EXPORT int aclrtGetDeviceCount(std::uint32_t* count) {
    if (int e = enter("aclrtGetDeviceCount")) return e;
    if (!count) return refuse(ErrInvalidParam, "aclrtGetDeviceCount: null count");
    if (!state().initialised) return refuse(ErrInvalidParam, "aclrtGetDeviceCount before aclInit");
    *count = state().deviceCount;
    return 0;
}

QL_STANDIN_EXPORT const char* aclrtGetSocName() {
    return "QuantLensStandIn";
}

QL_STANDIN_EXPORT int aclrtSetDevice(std::int32_t device) {
    if (int e = enter("aclrtSetDevice", std::to_string(device))) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.initialised) return refuse(ErrInvalidParam, "aclrtSetDevice before aclInit");
    if (device < 0 || static_cast<std::uint32_t>(device) >= s.deviceCount)
        return refuse(ErrInvalidParam, "aclrtSetDevice: no device " + std::to_string(device));
    ++s.deviceRefs[device];
    return 0;
}

QL_STANDIN_EXPORT int aclrtResetDevice(std::int32_t device) {
    if (int e = enter("aclrtResetDevice", std::to_string(device))) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.deviceRefs.find(device);
    if (it == s.deviceRefs.end()) return refuse(ErrInvalidParam, "aclrtResetDevice without aclrtSetDevice");
    if (--it->second == 0) s.deviceRefs.erase(it);
    return 0;
}

QL_STANDIN_EXPORT int aclrtCreateStream(void** stream) {
    if (int e = enter("aclrtCreateStream")) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!stream) return refuse(ErrInvalidParam, "aclrtCreateStream: null out pointer");
    if (s.deviceRefs.empty()) return refuse(ErrInvalidParam, "aclrtCreateStream without a current device");
    *stream = new char('s');
    s.streams[*stream];
    return 0;
}

QL_STANDIN_EXPORT int aclrtDestroyStream(void* stream) {
    if (int e = enter("aclrtDestroyStream")) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.streams.find(stream);
    if (it == s.streams.end()) return refuse(ErrInvalidParam, "aclrtDestroyStream: unknown stream");
    s.streams.erase(it);
    delete static_cast<char*>(stream);
    return 0;
}

// Work queued by an op runs here, so a caller that skips the synchronisation reads stale output.
QL_STANDIN_EXPORT int aclrtSynchronizeStream(void* stream) {
    if (int e = enter("aclrtSynchronizeStream")) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.streams.find(stream);
    if (it == s.streams.end()) return refuse(ErrInvalidParam, "aclrtSynchronizeStream: unknown stream");
    auto work = std::move(it->second);
    it->second.clear();
    int status = 0;
    for (auto& w : work)
        if (int e = w(); e && !status) status = e;
    return status;
}

QL_STANDIN_EXPORT int aclrtMalloc(void** devPtr, std::size_t size, int policy) {
    if (int e = enter("aclrtMalloc", std::to_string(size) + " policy=" + std::to_string(policy))) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!devPtr || size == 0) return refuse(ErrInvalidParam, "aclrtMalloc: null pointer or zero size");
    if (s.deviceRefs.empty()) return refuse(ErrInvalidParam, "aclrtMalloc without a current device");
    // 32-byte aligned, as aclrtMalloc guarantees and aclCreateTensor needs.
    void* p = std::aligned_alloc(32, (size + 31) / 32 * 32);
    if (!p) return ErrBadAllocation;
    std::memset(p, 0xCD, size); // fresh device memory is not zero
    s.allocations[reinterpret_cast<std::uintptr_t>(p)] = size;
    *devPtr = p;
    return 0;
}

QL_STANDIN_EXPORT int aclrtFree(void* devPtr) {
    if (int e = enter("aclrtFree")) return e;
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.allocations.find(reinterpret_cast<std::uintptr_t>(devPtr));
    if (it == s.allocations.end()) return refuse(ErrInvalidParam, "aclrtFree: not a device allocation");
    s.allocations.erase(it);
    std::free(devPtr);
    return 0;
}

QL_STANDIN_EXPORT int aclrtMemcpy(void* dst, std::size_t destMax, const void* src, std::size_t count,
                                  int kind) {
    if (int e = enter("aclrtMemcpy", "kind=" + std::to_string(kind) + " count=" + std::to_string(count) +
                                         " destMax=" + std::to_string(destMax)))
        return e;
    if (count > destMax) return refuse(ErrInvalidParam, "aclrtMemcpy: count exceeds destMax");
    const bool ok = kind == MemcpyHostToDevice   ? isDeviceRange(dst, count) && !isDeviceRange(src, 1)
                    : kind == MemcpyDeviceToHost ? isDeviceRange(src, count) && !isDeviceRange(dst, 1)
                                                 : false;
    if (!ok)
        return refuse(ErrInvalidParam, "aclrtMemcpy: pointers do not match kind " + std::to_string(kind));
    std::memcpy(dst, src, count);
    return 0;
}

// ---- test hooks ----

QL_STANDIN_EXPORT void ql_standin_reset() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.log.clear();
    s.calls.clear();
    s.failures.clear();
    s.lastError.clear();
    s.deviceCount = 1;
    s.workspaceSize = 4096;
}

QL_STANDIN_EXPORT void ql_standin_fail(const char* call, long nth, int code) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.failures.push_back({call, nth, code});
}

QL_STANDIN_EXPORT void ql_standin_set_device_count(std::uint32_t n) {
    state().deviceCount = n;
}
QL_STANDIN_EXPORT void ql_standin_set_workspace_size(std::uint64_t n) {
    state().workspaceSize = n;
}

QL_STANDIN_EXPORT long ql_standin_calls(const char* call) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.calls.find(call);
    return it == s.calls.end() ? 0 : it->second;
}

/// "allocations", "tensors", "executors", "streams", "devices" (devices set and not reset).
QL_STANDIN_EXPORT long ql_standin_live(const char* what) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const std::string w(what);
    if (w == "allocations") return static_cast<long>(s.allocations.size());
    if (w == "tensors") return s.liveTensors;
    if (w == "executors") return s.liveExecutors;
    if (w == "streams") return static_cast<long>(s.streams.size());
    if (w == "devices") {
        long n = 0;
        for (auto& [d, refs] : s.deviceRefs)
            n += refs;
        return n;
    }
    return -1;
}

/// The call log since the last reset, one call per line; valid until the next call of this hook.
QL_STANDIN_EXPORT const char* ql_standin_log() {
    static thread_local std::string text;
    State& s = state();
    std::lock_guard lock(s.mutex);
    text.clear();
    for (const auto& line : s.log)
        text += line + '\n';
    return text.c_str();
}

QL_STANDIN_EXPORT const char* ql_standin_last_error() {
    static thread_local std::string text;
    State& s = state();
    std::lock_guard lock(s.mutex);
    text = s.lastError;
    return text.c_str();
}
