#pragma once
// ascend: quantizes on an Ascend NPU through aclnnQuantize, aclnnAscendQuantV3 and aclnnGroupQuant,
// loading CANN at run time (CANN's acl and aclnn C interfaces, declared in acl_abi.h).
#include "ascend/ascend_runtime.h"
#include "backend/backend.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ql {

class AscendBackend : public Backend {
public:
    /// Loads CANN from ascendSearchDirs() and reads QUANTLENS_ASCEND_DEVICE (default 0) now; the
    /// device itself is probed on first use (aclInit is slow and not needed to list backends).
    AscendBackend();
    /// Loads from exactly these folders (an empty entry: the loader path).
    explicit AscendBackend(const std::vector<std::string>& searchDirs);

    std::string name() const override { return "ascend"; }
    std::string deviceDescription() const override;
    /// No library, a missing entry point, aclInit failing, no device, or a bad device number.
    std::optional<std::string> unavailableReason() const override;
    /// The unavailability reason, else why this preset / target / shape has no operator here.
    std::optional<std::string> supports(const ResolvedSpec& plan) const override;
    /// Calibrates on the host when job.params is absent, then runs the operator `repeat` times,
    /// each with its own device scope, stream and buffers. Throws AscendError when a CANN call
    /// fails (everything acquired is released first), QuantError for a bad job, Cancelled.
    Result run(const BackendTask& job, const ProgressFn& progress = {}) const override;

    /// The CANN files opened, in load order (empty when none loaded).
    std::vector<std::string> libraries() const;
    /// True when the loaded libraries are the test stand-in (tests/ascend_standin), not CANN.
    bool isStandIn() const;

private:
    struct Probe {
        std::optional<std::string> reason;
        std::string description;
    };
    const Probe& probe() const;

    std::shared_ptr<AscendRuntime> m_runtime;
    std::int32_t m_device = 0;
    std::optional<std::string> m_configError;
    mutable std::once_flag m_probeOnce;
    mutable Probe m_probe;
};

} // namespace ql
