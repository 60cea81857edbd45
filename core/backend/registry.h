#pragma once
// The list of compiled-in backends. Filled in one explicit place (registerBuiltinBackends in
// backends/), never by static initialisers; CPU backends come last as the fallback.
#include "backend/backend.h"
#include "base/error.h"

#include <memory>
#include <string>
#include <vector>

namespace ql {

/// A backend name this build does not have (the CLI reports it as a usage error).
class UnknownBackend : public QuantError {
public:
    using QuantError::QuantError;
};

class BackendRegistry {
public:
    void add(std::unique_ptr<Backend> backend);
    /// In registration order.
    const std::vector<std::unique_ptr<Backend>>& backends() const { return m_backends; }
    /// nullptr when no backend has this name.
    const Backend* find(const std::string& name) const;
    /// The named backend, ready to run: UnknownBackend when no backend has this name, QuantError
    /// (with the backend's reason) when it is unavailable.
    const Backend& require(const std::string& name) const;
    /// "cpu, cpu-reference" — for error messages listing the choices.
    std::string names() const;

private:
    std::vector<std::unique_ptr<Backend>> m_backends;
};

} // namespace ql
