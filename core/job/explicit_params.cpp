#include "job/explicit_params.h"

#include <filesystem>

#include "tensor/error.h"

namespace ql {
namespace {

// compressed-tensors names a weight's parameters after it: "fc.weight" -> "fc.weight_scale".
std::vector<float> loadParams(const std::string& text, const std::string& tensor, const char* suffix, const char* role,
                              std::size_t selected) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(text, ec)) return loadTensorValues(TensorRef{text, tensor + suffix}, role);
    const auto ref = parseTensorRef(text);
    if (!ref) throw QuantError(std::string(role) + " must be named as FILE:TENSOR (or FILE alone), got '" + text + "'");
    if (selected > 1)
        throw QuantError(std::string(role) + " '" + text + "' belong to one tensor, but " + std::to_string(selected) +
                         " are selected: name the file alone to read each tensor's own '<name>" + suffix + "'");
    return loadTensorValues(*ref, role);
}

} // namespace

std::optional<QuantParams> explicitParams(const JobRequest& r, const std::string& tensor, std::size_t selected) {
    if (r.spec.calibration.method != CalibMethod::Explicit) return std::nullopt;
    if (r.params.scales.empty()) throw QuantError("calibration 'file' needs the scales (FILE:TENSOR, or FILE alone)");
    QuantParams p;
    p.scales = loadParams(r.params.scales, tensor, "_scale", "scales", selected);
    if (!r.params.zeroPoints.empty())
        p.zeroPoints = loadParams(r.params.zeroPoints, tensor, "_zero_point", "zero points", selected);
    return p;
}

} // namespace ql
