#pragma once
// A core/job request over a model file, with this build's backends.
#include "builtin_backends.h"
#include "job/job.h"

#include <memory>
#include <string>

namespace qltest {

inline ql::JobRequest jobRequest(const std::string& model, const ql::QuantSpec& spec) {
    ql::JobRequest r;
    r.source = ql::openTensorSource(model);
    auto registry = std::make_shared<ql::BackendRegistry>();
    ql::registerBuiltinBackends(*registry);
    r.registry = std::move(registry);
    r.spec = spec;
    return r;
}

} // namespace qltest
