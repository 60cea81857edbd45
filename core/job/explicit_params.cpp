#include "job/explicit_params.h"

#include "base/error.h"

#include <filesystem>

namespace ql {

const TensorSource& ExplicitParams::open(const std::string& file) {
    auto& source = m_open[file];
    if (!source) source = openTensorSource(file);
    return *source;
}

// compressed-tensors names a weight's parameters after it: "fc.weight" -> "fc.weight_scale".
std::vector<float> ExplicitParams::load(const std::string& text, const std::string& tensor,
                                        const char* suffix, const char* role) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(text, ec))
        return loadTensorValues(open(text), tensor + suffix, role);
    const auto ref = parseTensorRef(text);
    if (!ref)
        throw QuantError(std::string(role) + " must be named as FILE:TENSOR (or FILE alone), got '" + text +
                         "'");
    if (m_selected > 1)
        throw QuantError(
            std::string(role) + " '" + text + "' belong to one tensor, but " + std::to_string(m_selected) +
            " are selected: name the file alone to read each tensor's own '<name>" + suffix + "'");
    return loadTensorValues(open(ref->file), ref->tensor, role);
}

std::optional<QuantParams> ExplicitParams::forTensor(const std::string& tensor) {
    const JobRequest& r = m_request;
    if (r.spec.calibration.method != CalibMethod::Explicit) return std::nullopt;
    if (r.params.scales.empty())
        throw QuantError("calibration 'file' needs the scales (FILE:TENSOR, or FILE alone)");
    QuantParams p;
    p.scales = load(r.params.scales, tensor, "_scale", "scales");
    if (!r.params.zeroPoints.empty())
        p.zeroPoints = load(r.params.zeroPoints, tensor, "_zero_point", "zero points");
    return p;
}

} // namespace ql
