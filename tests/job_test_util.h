#pragma once
// A core/job request over a model file, with this build's backends.
#include "builtin_backends.h"
#include "job/job.h"
#include "quant/spec.h"

#include <cstdint>
#include <memory>
#include <optional>
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

/// A preset's spec with no axis of its own, so the weight's role picks it: per-channel, or the
/// format's blocks for MX and NVFP4; `target` by default the preset's own.
inline ql::QuantSpec roleSpec(ql::Preset p, std::optional<ql::Target> target = std::nullopt) {
    ql::QuantSpec s;
    s.preset = p;
    s.target = target ? *target : ql::presetInfo(p).defaultTarget;
    s.scheme = ql::isBlockFormat(p) ? ql::Scheme::Block : ql::Scheme::PerChannel;
    s.axes.clear();
    return s;
}

/// Groups of `g` along the axis the weight's role gives.
inline ql::QuantSpec roleGroupSpec(std::int64_t g) {
    ql::QuantSpec s;
    s.preset = ql::Preset::Custom;
    s.scheme = ql::Scheme::PerGroup;
    s.groupSize = g;
    s.axes.clear();
    return s;
}

} // namespace qltest
