#include "builtin_backends.h"

#include "ascend/ascend_registration.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_reference_backend.h"
#include "quantlens/config.h"
#if QUANTLENS_HAVE_CUDA
#include "cuda/cuda_registration.h"
#endif

namespace ql {

void registerBuiltinBackends(BackendRegistry& registry) {
    // Device backends first, guarded by their config flags where they are optional; CPU last.
    registerAscendBackend(registry);
#if QUANTLENS_HAVE_CUDA
    registerCudaBackend(registry);
#endif
    registry.add(std::make_unique<CpuBackend>());
    registry.add(std::make_unique<CpuReferenceBackend>());
}

} // namespace ql
