// Per-tensor specs: the role's axes, or its flattened view, when the user named none (the rule is
// quant/weight_view.h planForRole).
#include "job/job.h"
#include "quant/weight_view.h"

namespace ql {

RoleAxes roleOf(const TensorSource& source, const TensorInfo& info) {
    return weightRole(info.name, info.shape, source.weightUse(info.name));
}

QuantSpec specForTensor(const JobRequest& request, const QuantSpec& spec, const TensorInfo& info) {
    if (!request.roleAxes || !request.source) return spec;
    return specForRole(spec, roleOf(*request.source, info));
}

ResolvedSpec planForTensor(const JobRequest& request, const QuantSpec& spec, const TensorInfo& info) {
    if (request.roleAxes && request.source)
        return planForRole(spec, info.shape, roleOf(*request.source, info));
    return planAsGiven(spec, info.shape); // an axis the user named applies as given
}

} // namespace ql
