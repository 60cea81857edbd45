#include "cli/job_request.h"

#include <filesystem>
#include <utility>

#include "builtin_backends.h"
#include "cli/cli_error.h"
#include "tensor/error.h"

namespace ql::cli {

const Backend& pickBackend(const BackendRegistry& registry, const std::string& name) {
    try {
        return registry.require(name);
    } catch (const UnknownBackend& e) {
        throw UsageError(e.what()); // a name the user typed: exit code 2, as for any bad option
    }
}

JobRequest makeRequest(const std::string& file, const SpecOptions& spec, const std::string& backend, int repeat) {
    JobRequest r;
    r.spec = buildSpec(spec);
    auto registry = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*registry);
    pickBackend(*registry, backend);
    r.registry = std::move(registry);
    r.backend = backend;
    for (const auto& [flag, text] : {std::pair{"--scale", spec.scale}, std::pair{"--zero-point", spec.zeroPoint}}) {
        std::error_code ec;
        if (!text.empty() && !std::filesystem::is_regular_file(text, ec) && !parseTensorRef(text))
            throw UsageError(std::string(flag) + " expects FILE:TENSOR (or FILE alone on a whole-model run), got '" +
                             text + "'");
    }
    r.params = {spec.scale, spec.zeroPoint};
    r.repeat = repeat;
    r.source = openTensorSource(file);
    return r;
}

} // namespace ql::cli
