#include "cuda/cuda_registration.h"

#include "cuda/cuda_backend.h"

namespace ql {

void registerCudaBackend(BackendRegistry& registry) {
    registry.add(std::make_unique<CudaBackend>());
}

} // namespace ql
