#pragma once
// The module's one backend registry, made on first use and kept for the life of the process.
#include "backend/registry.h"

#include <memory>
#include <string>

namespace ql::py {

std::shared_ptr<const BackendRegistry> registry();
/// The named backend, ready to run; UnknownBackend (the CLI's message) or QuantError otherwise.
const Backend& requireBackend(const std::string& name);

} // namespace ql::py
