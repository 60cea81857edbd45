#include "backends.h"

#include "builtin_backends.h"

namespace ql::py {

std::shared_ptr<const BackendRegistry> registry() {
    // Never destroyed: a backend's worker threads must not be torn down by a static destructor after
    // the interpreter has gone.
    static const auto* shared = new std::shared_ptr<const BackendRegistry>([] {
        auto r = std::make_shared<BackendRegistry>();
        registerBuiltinBackends(*r);
        return r;
    }());
    return *shared;
}

const Backend& requireBackend(const std::string& name) {
    return registry()->require(name);
}

} // namespace ql::py
