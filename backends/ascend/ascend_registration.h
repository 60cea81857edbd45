#pragma once
// Adds the ascend backend to a registry; called from registerBuiltinBackends (backends/cpu/builtin.cpp).
#include "backend/registry.h"

namespace ql {

/// Always registers "ascend": when CANN or a device is absent it stays listed, unavailable, with
/// the reason (so `quantlens-cli backends` and the GUI can say why).
void registerAscendBackend(BackendRegistry& registry);

} // namespace ql
