#pragma once
// Ctrl-C during a long job: core's progress callback returns false to cancel (backend/backend.h).
// While the job runs without the GIL, the callback takes the GIL back on the calling thread at most
// every 50 ms and runs Python's signal handlers (PyErr_CheckSignals); when one raises
// (KeyboardInterrupt), the job is cancelled and that exception is raised once the job has stopped.
#include "backend/backend.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <pybind11/pybind11.h>
#include <thread>

namespace ql::py {

class Interruptible {
public:
    Interruptible();
    Interruptible(const Interruptible&) = delete;
    Interruptible& operator=(const Interruptible&) = delete;
    ~Interruptible();

    /// The progress callback for the job (valid while this object lives). Safe from any thread: only
    /// the thread that made this object checks signals.
    ProgressFn callback();
    /// Runs `job` without the GIL; when it ends in Cancelled because a signal handler raised, raises
    /// that Python exception instead.
    template <typename F> auto run(F&& job) {
        try {
            pybind11::gil_scoped_release release;
            return job();
        } catch (const Cancelled&) {
            raisePending();
            throw;
        }
    }

private:
    bool check();
    void raisePending(); // with the GIL held

    std::thread::id m_owner;
    std::atomic<bool> m_cancelled{false};
    std::chrono::steady_clock::time_point m_lastCheck;
    PyObject* m_type = nullptr; // the exception a signal handler raised (owned references)
    PyObject* m_value = nullptr;
    PyObject* m_traceback = nullptr;
};

} // namespace ql::py
