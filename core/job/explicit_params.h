#pragma once
// Scales and zero points a user supplies from a file (calibration "file"), for one tensor or for
// every tensor of a model run by name (internal to core/job).
#include "job/job.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace ql {

/// Reads a request's parameter files, opening each file once however many tensors it serves.
class ExplicitParams {
public:
    /// `selected`: how many tensors the run takes (a FILE:TENSOR reference is refused for more than one).
    ExplicitParams(const JobRequest& request, std::size_t selected)
        : m_request(request)
        , m_selected(selected) {}

    /// nullopt unless the request's calibration is Explicit. A reference FILE:TENSOR names one tensor's
    /// parameters; a file alone is looked up by name: `<tensor>_scale` and `<tensor>_zero_point`.
    /// Throws FileError / QuantError naming the file, tensor and reason.
    std::optional<QuantParams> forTensor(const std::string& tensor);

private:
    std::vector<float> load(const std::string& text, const std::string& tensor, const char* suffix,
                            const char* role);
    const TensorSource& open(const std::string& file);

    const JobRequest& m_request;
    std::size_t m_selected;
    std::map<std::string, std::unique_ptr<TensorSource>> m_open;
};

} // namespace ql
