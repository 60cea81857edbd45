#pragma once
// Work on untrusted input that could crash a library (libhdf5 on a corrupt file) runs in a forked
// child first, so a crash there becomes an error here instead of taking the program down.
#include <functional>
#include <string>

namespace ql {

/// Runs `work` in a forked child (which then ends with _exit, skipping exit hooks) and waits for it
/// at most `timeoutMs`. Throws FileError "<what>: <crashed> (signal N)" when the child dies from a
/// signal (or ends with a status other than 0: a library's abort handler), and "<what>: took over N s ..."
/// (after killing it) when it runs out of time. Returns normally when the child ends normally, or when no
/// child can be forked (the caller then goes on in this process). Whatever lock must not be held by another
/// thread at fork, the caller holds.
void runInChild(const std::function<void()>& work, int timeoutMs, const std::string& what,
                const std::string& crashed);

} // namespace ql
