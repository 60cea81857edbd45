#include "ascend/ascend_backend.h"

#include "ascend/ascend_guards.h"
#include "ascend/ascend_ops.h"
#include "base/error.h"
#include "quant/calibration.h"
#include "quant/reference.h"

#include <chrono>
#include <cstdlib>

namespace ql {

AscendBackend::AscendBackend()
    : AscendBackend(ascendSearchDirs()) {}

AscendBackend::AscendBackend(const std::vector<std::string>& searchDirs)
    : m_runtime(AscendRuntime::load(searchDirs)) {
    if (const char* dev = std::getenv("QUANTLENS_ASCEND_DEVICE"); dev && *dev) {
        char* end = nullptr;
        const long id = std::strtol(dev, &end, 10);
        if (*end != '\0' || id < 0 || id > 1023)
            m_configError = "QUANTLENS_ASCEND_DEVICE=" + std::string(dev) + " is not a device number";
        else
            m_device = static_cast<std::int32_t>(id);
    }
}

const AscendBackend::Probe& AscendBackend::probe() const {
    std::call_once(m_probeOnce, [this] {
        const std::string dev = std::to_string(m_device);
        if (const auto& err = m_runtime->loadError()) {
            m_probe.reason = "no CANN runtime: " + *err;
            return;
        }
        if (m_configError) {
            m_probe.reason = *m_configError;
            return;
        }
        const AclApi& api = m_runtime->api();
        if (const aclError e = m_runtime->ensureInitialised(); e != acl::kSuccess) {
            m_probe.reason = "aclInit failed with error " + std::to_string(e);
            return;
        }
        if (api.getDeviceCount) {
            std::uint32_t count = 0;
            if (const aclError e = api.getDeviceCount(&count); e != acl::kSuccess) {
                m_probe.reason =
                    "no Ascend device: aclrtGetDeviceCount failed with error " + std::to_string(e);
                return;
            }
            if (count == 0) {
                m_probe.reason = "no Ascend device: CANN is installed but finds no NPU";
                return;
            }
            if (static_cast<std::uint32_t>(m_device) >= count) {
                m_probe.reason = "device " + dev + " (QUANTLENS_ASCEND_DEVICE) does not exist: CANN finds " +
                                 std::to_string(count) + " device(s)";
                return;
            }
        } else if (const aclError e = api.setDevice(m_device); e != acl::kSuccess) {
            m_probe.reason =
                "no Ascend device: aclrtSetDevice(" + dev + ") failed with error " + std::to_string(e);
            return;
        } else {
            api.resetDevice(m_device);
        }
        if (m_runtime->isStandIn()) {
            m_probe.description = "CANN stand-in on the CPU (test double, not a device)";
            return;
        }
        const char* soc = api.getSocName ? api.getSocName() : nullptr;
        m_probe.description =
            (soc && *soc ? std::string(soc) : std::string("Ascend NPU")) + " (device " + dev + ")";
    });
    return m_probe;
}

std::string AscendBackend::deviceDescription() const {
    const Probe& p = probe();
    return p.reason ? std::string("Ascend NPU (not available)") : p.description;
}

std::optional<std::string> AscendBackend::unavailableReason() const {
    return probe().reason;
}

std::optional<std::string> AscendBackend::supports(const ResolvedSpec& plan) const {
    if (auto why = unavailableReason()) return why;
    return ascendPlanUnsupported(plan);
}

std::vector<std::string> AscendBackend::libraries() const {
    return m_runtime->libraries();
}

bool AscendBackend::isStandIn() const {
    return m_runtime->isStandIn();
}

Result AscendBackend::run(const BackendTask& job, const ProgressFn& progress) const {
    if (auto why = supports(job.plan)) throw QuantError("ascend: " + *why);
    std::vector<float> storage;
    const std::span<const float> x = jobValues(job, storage);
    const AclApi& api = m_runtime->api();
    Result result;
    result.plan = job.plan;
    result.timing = timeRepeats(job.repeat, runProgress(job, progress), [&] {
        PhaseTimes t;
        const auto start = std::chrono::steady_clock::now();
        {
            // Host-side calibration, as cpu-reference does, so both see the same parameters.
            result.params = job.params ? *job.params : calibrate(job.plan, x);
            checkParams(job.plan, result.params); // before any device resource is taken
            OpCall call = buildOpCall(job.plan, result.params, x);
            DeviceScope device(api, m_device);
            StreamGuard stream(api);
            t.prepareMs = msSince(start);
            executeOpCall(api, stream.get(), call, t);
            const auto unpackStart = std::chrono::steady_clock::now();
            result.codes = unpackCodes(job.plan, call.out.owned);
            t.downloadMs += msSince(unpackStart);
        } // stream destroyed and device reset before the time is taken and progress reported
        t.totalMs = msSince(start);
        return t;
    });
    accumulateOnHost(job, result, progress); // the device gives back codes only
    return result;
}

} // namespace ql
