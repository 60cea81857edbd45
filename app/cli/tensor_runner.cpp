#include "cli/tensor_runner.h"

#include "cli/cli_error.h"
#include "quant/calibration.h"
#include "tensor/error.h"

namespace ql::cli {

std::vector<float> loadValues(const TensorSource& source, const std::string& name) {
    return source.load(name).toFloatVector();
}

const Backend& pickBackend(const BackendRegistry& registry, const std::string& name) {
    const Backend* b = registry.find(name);
    if (!b) throw UsageError("unknown backend '" + name + "' (this build has: " + registry.names() + ")");
    if (auto why = b->unavailableReason()) throw QuantError("backend " + name + " is unavailable: " + *why);
    return *b;
}

QuantParams convertParams(const QuantParams& p, const Convention& from, const Convention& to) {
    QuantParams out = p;
    for (float& s : out.scales) s = operatorScaleFromStep(stepFromOperatorScale(s, from), to);
    return out;
}

std::string oneLine(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

} // namespace ql::cli
