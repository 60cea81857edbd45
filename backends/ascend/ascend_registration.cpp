#include "ascend/ascend_registration.h"

#include "ascend/ascend_backend.h"

namespace ql {

void registerAscendBackend(BackendRegistry& registry) {
    registry.add(std::make_unique<AscendBackend>());
}

} // namespace ql
