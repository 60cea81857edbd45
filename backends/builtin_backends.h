#pragma once
// The one place that lists the compiled-in backends (each is a target of its own under backends/).
#include "backend/registry.h"

namespace ql {

/// Adds every backend this build has, device backends first, CPU last (the fallback).
void registerBuiltinBackends(BackendRegistry& registry);

} // namespace ql
