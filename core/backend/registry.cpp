#include "backend/registry.h"

#include "base/error.h"

namespace ql {

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
    if (find(backend->name())) throw QuantError("backend registered twice: " + backend->name());
    m_backends.push_back(std::move(backend));
}

const Backend* BackendRegistry::find(const std::string& name) const {
    for (const auto& b : m_backends)
        if (b->name() == name) return b.get();
    return nullptr;
}

const Backend& BackendRegistry::require(const std::string& name) const {
    const Backend* b = find(name);
    if (!b) throw UnknownBackend("unknown backend '" + name + "' (this build has: " + names() + ")");
    if (auto why = b->unavailableReason()) throw QuantError("backend " + name + " is unavailable: " + *why);
    return *b;
}

std::string BackendRegistry::names() const {
    std::string out;
    for (const auto& b : m_backends)
        out += (out.empty() ? "" : ", ") + b->name();
    return out;
}

} // namespace ql
