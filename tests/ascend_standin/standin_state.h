#pragma once
// Shared state of the stand-in libraries. It lives in libascendcl.so; libnnopbase.so and
// libopapi.so link to it, as the real ones depend on the runtime. "Device memory" is host memory
// with bookkeeping, so every pointer handed to an op can be checked.
#include "standin_abi.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace qlstandin {

struct Failure {
    std::string call;
    long nth; // 1-based count of calls of `call` from the moment it was armed
    int code;
};

struct State {
    std::recursive_mutex mutex;
    std::map<std::uintptr_t, std::size_t> allocations; // base -> bytes
    std::vector<std::string> log;
    std::map<std::string, long> calls;
    std::vector<Failure> failures;
    std::string lastError;
    bool initialised = false;
    std::uint32_t deviceCount = 1;
    std::uint64_t workspaceSize = 4096;
    std::map<int, long> deviceRefs;                             // aclrtSetDevice minus Reset
    std::map<void*, std::vector<std::function<int()>>> streams; // stream -> queued work
    long liveTensors = 0;
    long liveExecutors = 0;
    // Executors handed out and not yet launched. CANN's ABI has no call to release one whose
    // launch never happens (an error in between), so the stand-in keeps them reachable here.
    std::set<const void*> pendingExecutors;
};

/// The process-wide state; never destroyed, so calls made during process exit still work.
__attribute__((visibility("default"))) State& state();

/// Counts and logs a call; returns the injected error code for it, or 0.
__attribute__((visibility("default"))) int enter(const std::string& call, const std::string& details = {});

/// Records why a call was refused (ql_standin_last_error) and returns `code`.
__attribute__((visibility("default"))) int refuse(int code, const std::string& why);

/// True when [p, p + bytes) lies inside one live allocation.
__attribute__((visibility("default"))) bool isDeviceRange(const void* p, std::size_t bytes);

__attribute__((visibility("default"))) std::string formatDims(const std::int64_t* dims, std::uint64_t n);

} // namespace qlstandin
