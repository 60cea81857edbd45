#pragma once
// The Backend interface: one small contract every device implements.
#include "analysis/accumulators.h"
#include "backend/timing.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "tensor/tensor.h"

#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ql {

/// Progress contract: called with the fraction done in [0, 1]; returning false asks the backend to
/// stop. Backends check it at least once per chunk. May be empty (no reporting, no cancel).
using ProgressFn = std::function<bool(double done)>;

/// Thrown by Backend::run when the progress callback returned false. Chosen over a "cancelled"
/// flag in Result so that a cancelled run can never be mistaken for a finished one.
class Cancelled : public std::runtime_error {
public:
    Cancelled()
        : std::runtime_error("cancelled") {}
};

/// One quantization job: the data, the resolved plan, and optionally the parameters to use.
struct BackendTask {
    /// Row-major f32 values in plan.shape. When empty, `tensor` is converted (one copy).
    std::span<const float> values;
    Tensor tensor;
    ResolvedSpec plan;
    /// Scales / zero points to use as given; when absent the backend calibrates from the data.
    std::optional<QuantParams> params;
    /// How many times to run (timing median and spread); the result of the last run is returned.
    int repeat = 1;
    /// When set, the backend fills Result::statistics from its own pass (codes only when absent).
    std::optional<StatisticsRequest> statistics;
};

struct Result {
    ResolvedSpec plan;
    QuantParams params;
    /// Every element's code; may be empty when the job's statistics request turned keepCodes off
    /// (the cpu backend then makes each part's codes in a buffer it reuses).
    Codes codes;
    Timing timing;
    /// The report's accumulators, filled by the backend when the job asked for them (the last run's).
    std::optional<TensorAccumulators> statistics;
};

class Backend {
public:
    virtual ~Backend() = default;
    /// Short stable name used on the command line ("cpu", "cpu-reference", "ascend").
    virtual std::string name() const = 0;
    /// The device in words ("16 CPU threads", "Ascend 910B2 (device 0)").
    virtual std::string deviceDescription() const = 0;
    /// Why the backend is unusable right now (no device, library missing); nullopt when available.
    virtual std::optional<std::string> unavailableReason() const { return std::nullopt; }
    /// nullopt when this backend can run `plan`; otherwise the reason it cannot, in words.
    virtual std::optional<std::string> supports(const ResolvedSpec& plan) const = 0;
    /// Runs the job. Throws QuantError for a bad job, Cancelled when progress returned false.
    virtual Result run(const BackendTask& job, const ProgressFn& progress = {}) const = 0;
    /// Starts, without waiting for it, what the first run would start anyway (a device context);
    /// run() waits for it. The pipeline calls it as a job begins, so that the start overlaps opening
    /// the file and reading the first tensor. Errors are left for run() to report.
    virtual void prepare() const {}
};

/// The job's values as f32: `values` when set, else the tensor (in place when it is F32, else
/// converted into `storage`). Throws QuantError when the count does not match the plan.
std::span<const float> jobValues(const BackendTask& job, std::vector<float>& storage);

/// The job's values as the statistics read them: the tensor's f32, bf16 or f16 bytes in place, else
/// the f32 values (converted into `storage` for other dtypes).
ValuesView jobView(const BackendTask& job, std::vector<float>& storage);

/// The progress a backend's run reports when the job asks for statistics: its runs fill the first
/// half, the statistics the second. `progress` itself when it asks for none.
ProgressFn runProgress(const BackendTask& job, const ProgressFn& progress);

/// Fills result.statistics when the job asks for statistics, through the host accumulate() over the
/// result's codes (a backend whose device gives back codes only), reporting the second half of the
/// progress. Throws Cancelled when progress returns false.
void accumulateOnHost(const BackendTask& job, Result& result, const ProgressFn& progress);

/// Calls `progress` (when set) and throws Cancelled when it returns false.
bool reportProgress(const ProgressFn& progress, double done);

/// The repeat loop of BackendTask::repeat: runs `once` max(repeat, 1) times, reporting progress after each
/// run, and returns the median and spread of the phases each run measured.
Timing timeRepeats(int repeat, const ProgressFn& progress, const std::function<PhaseTimes()>& once);

} // namespace ql
