#pragma once
// The test side of the stand-in: its hooks, found with dlsym in the very libascendcl.so the
// backend loaded (same path, so dlopen returns the same handle and the same state).
#include <cstdint>
#include <dlfcn.h>
#include <stdexcept>
#include <string>

namespace qltest {

struct StandInHooks {
    void (*reset)() = nullptr;
    void (*fail)(const char* call, long nth, int code) = nullptr;
    void (*setDeviceCount)(std::uint32_t) = nullptr;
    void (*setWorkspaceSize)(std::uint64_t) = nullptr;
    long (*calls)(const char* call) = nullptr;
    long (*live)(const char* what) = nullptr;
    const char* (*log)() = nullptr;
    const char* (*lastError)() = nullptr;

    static StandInHooks load(const std::string& dir) {
        void* h = dlopen((dir + "/libascendcl.so").c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (!h) throw std::runtime_error(std::string("cannot open the stand-in: ") + dlerror());
        StandInHooks s;
        sym(h, "ql_standin_reset", s.reset);
        sym(h, "ql_standin_fail", s.fail);
        sym(h, "ql_standin_set_device_count", s.setDeviceCount);
        sym(h, "ql_standin_set_workspace_size", s.setWorkspaceSize);
        sym(h, "ql_standin_calls", s.calls);
        sym(h, "ql_standin_live", s.live);
        sym(h, "ql_standin_log", s.log);
        sym(h, "ql_standin_last_error", s.lastError);
        return s;
    }

    /// Every resource a run can take, live now: a clean run leaves all of them at zero.
    std::string leaks() const {
        std::string out;
        for (const char* what : {"allocations", "tensors", "streams", "devices"})
            if (long n = live(what)) out += std::string(what) + "=" + std::to_string(n) + " ";
        return out;
    }

private:
    template <typename Fn> static void sym(void* h, const char* name, Fn& slot) {
        slot = reinterpret_cast<Fn>(dlsym(h, name));
        if (!slot) throw std::runtime_error(std::string("stand-in lacks ") + name);
    }
};

} // namespace qltest
