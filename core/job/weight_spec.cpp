// Per-tensor specs: the role's axes when the user named none (DESIGN "Weights in their model").
#include "base/error.h"
#include "job/job.h"

namespace ql {

RoleAxes roleOf(const TensorSource& source, const TensorInfo& info) {
    return weightRole(info.name, info.shape, source.weightUse(info.name));
}

QuantSpec specForTensor(const JobRequest& request, const QuantSpec& spec, const TensorInfo& info) {
    if (!request.roleAxes || !request.source) return spec;
    return specForRole(spec, roleOf(*request.source, info));
}

ResolvedSpec planForTensor(const JobRequest& request, const QuantSpec& spec, const TensorInfo& info) {
    ResolvedSpec plan = resolveSpec(specForTensor(request, spec, info), info.shape);
    if (std::string why = degenerateLayout(plan); !why.empty()) {
        if (request.roleAxes && request.source) { // the default came from the role: say which
            const RoleAxes role = roleOf(*request.source, info);
            why = std::string(nameOf(role.role)) + " " + std::string(layoutOf(role.role)) + ": " + why;
        }
        throw QuantError(why);
    }
    return plan;
}

} // namespace ql
