#pragma once
// Adds the cuda backend to a registry; called from registerBuiltinBackends (backends/cpu/builtin.cpp)
// in builds with QUANTLENS_HAVE_CUDA.
#include "backend/registry.h"

namespace ql {

/// Always registers "cuda" in a CUDA build: without a GPU it stays listed, unavailable, with the reason.
void registerCudaBackend(BackendRegistry& registry);

} // namespace ql
