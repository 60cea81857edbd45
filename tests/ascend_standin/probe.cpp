// ql_ascend_probe: builds the ascend backend with the process's environment and prints whether it
// is available. Run by tst_ascend_backend in a fresh process, so that the stand-in the test itself
// loaded (found by soname) cannot answer the default search.
#include "ascend/ascend_backend.h"

#include <cstdio>

int main() {
    const ql::AscendBackend backend;
    if (const auto why = backend.unavailableReason()) {
        std::printf("unavailable: %s\n", why->c_str());
        return 1;
    }
    std::printf("available: %s\n", backend.deviceDescription().c_str());
    return 0;
}
