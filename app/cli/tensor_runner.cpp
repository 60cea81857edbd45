#include "cli/tensor_runner.h"

#include "cli/cli_error.h"
#include "quant/calibration.h"
#include "tensor/error.h"

namespace ql::cli {

std::vector<float> loadValues(const TensorSource& source, const std::string& name) {
    return source.load(name).toFloatVector();
}

const Backend& pickBackend(const BackendRegistry& registry, const std::string& name) {
    try {
        return registry.require(name);
    } catch (const UnknownBackend& e) {
        throw UsageError(e.what()); // a name the user typed: exit code 2, as for any bad option
    }
}

std::string oneLine(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

} // namespace ql::cli
