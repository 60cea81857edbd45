#include "builtin_backends.h"
#include "cli/commands.h"

#include <cstdio>

namespace ql::cli {

CLI::App* addBackends(CLI::App& parent) {
    return parent.add_subcommand("backends",
                                 "List the backends this build has and whether each can run now.");
}

int runBackends() {
    BackendRegistry registry;
    registerBuiltinBackends(registry);
    for (const auto& b : registry.backends()) {
        const auto why = b->unavailableReason();
        std::printf("%-14s %-12s %s\n", b->name().c_str(), why ? "unavailable" : "available",
                    (why ? *why : b->deviceDescription()).c_str());
    }
    return 0;
}

} // namespace ql::cli
