#include "cli/job_request.h"

#include "base/error.h"
#include "builtin_backends.h"
#include "cli/cli_error.h"
#include "io/atomic_file.h"
#include "job/importance.h"

#include <cstdio>
#include <filesystem>
#include <utility>

namespace ql::cli {

const Backend& pickBackend(const BackendRegistry& registry, const std::string& name) {
    try {
        return registry.require(name);
    } catch (const UnknownBackend& e) {
        throw UsageError(e.what()); // a name the user typed: exit code 2, as for any bad option
    }
}

void addImportanceOption(CLI::App& cmd, std::string& importance) {
    cmd.add_option(
        "--importance", importance,
        "Activation statistics per input channel: a llama.cpp imatrix (.dat or .gguf) or a safetensors "
        "file of <module>.input_sq_mean [in] or <module>.inputs [n, in]. Adds the importance-weighted "
        "error (the layer output's SQNR) and ranks by it");
}

void printNotes(const std::string& file, const std::vector<RunNote>& notes) {
    for (const RunNote& note : notes)
        std::fprintf(stderr, "quantlens-cli: note: %s\n", oneLine(noteText(file, note)).c_str());
}

void noteMissingImportance(const std::string& file, const std::vector<TensorReport>& reports) {
    printNotes(file, importanceNotes(reports));
}

JobRequest makeRequest(const std::string& file, const SpecOptions& spec, const std::string& backend,
                       int repeat, const std::string& importance) {
    JobRequest r;
    r.spec = buildSpec(spec);
    r.roleAxes = spec.axis.empty(); // each tensor's role decides (quant/weight_role.h)
    auto registry = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*registry);
    pickBackend(*registry, backend);
    r.registry = std::move(registry);
    r.backend = backend;
    for (const auto& [flag, text] :
         {std::pair{"--scale", spec.scale}, std::pair{"--zero-point", spec.zeroPoint}}) {
        std::error_code ec;
        if (!text.empty() && !std::filesystem::is_regular_file(text, ec) && !parseTensorRef(text))
            throw UsageError(std::string(flag) +
                             " expects FILE:TENSOR (or FILE alone on a whole-model run), got '" + text + "'");
    }
    r.params = {spec.scale, spec.zeroPoint};
    r.repeat = repeat;
    r.source = openTensorSource(file);
    if (!importance.empty()) r.importance = Importance::open(importance);
    return r;
}

} // namespace ql::cli
