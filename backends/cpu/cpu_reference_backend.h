#pragma once
// cpu-reference: the scalar oracle (ql::calibrate + ql::quantizeReference), one thread.
#include "backend/backend.h"

namespace ql {

class CpuReferenceBackend : public Backend {
public:
    std::string name() const override { return "cpu-reference"; }
    std::string deviceDescription() const override;
    std::optional<std::string> supports(const ResolvedSpec& plan) const override;
    /// Progress is reported once per run (the reference has no chunks); cancel is checked between runs.
    Result run(const BackendTask& job, const ProgressFn& progress = {}) const override;
};

} // namespace ql
