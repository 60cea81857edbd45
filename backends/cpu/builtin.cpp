#include "cpu/builtin.h"

#include "cpu/cpu_backend.h"
#include "cpu/cpu_reference_backend.h"
#include "quantlens/config.h"

namespace ql {

void registerBuiltinBackends(BackendRegistry& registry) {
    // Device backends register here, guarded by their config flags (QUANTLENS_HAVE_CUDA, ...).
    registry.add(std::make_unique<CpuBackend>());
    registry.add(std::make_unique<CpuReferenceBackend>());
}

} // namespace ql
