#include "io/child_process.h"

#include "base/error.h"

#include <cerrno>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

namespace ql {

void runInChild(const std::function<void()>& work, int timeoutMs, const std::string& what,
                const std::string& crashed) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        try {
            work();
        } catch (...) { // errors are the parent's to report, from its own attempt
        }
        ::_exit(0);
    }
    if (pid < 0) return;
    int status = 0;
    for (int waited = 0;; waited += 10) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return;
        if (waited >= timeoutMs) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            throw FileError(what + ": took over " + std::to_string(timeoutMs / 1000) +
                            " s in a test process: refused (corrupt or crafted?)");
        }
        ::usleep(10000);
    }
    if (WIFSIGNALED(status))
        throw FileError(what + ": " + crashed + " (signal " + std::to_string(WTERMSIG(status)) + ")");
    // The child ends with _exit(0) after its work: any other status means the library ended the
    // process itself (abort handlers, a sanitizer's report).
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw FileError(what + ": " + crashed + " (the test process exited with status " +
                        std::to_string(WEXITSTATUS(status)) + ")");
}

} // namespace ql
