#pragma once
// The cpu backend's job driver: walks any layout as rows of constant-scale runs, splits the work
// into chunks over threads, and fuses calibration, quantization and the statistics into
// as few passes over the input as the layout allows (one read when each row owns its scale groups,
// and one more for the histograms when the job asks for statistics).
#include "analysis/accumulators.h"
#include "backend/backend.h"
#include "cpu/kernels.h"

#include <cstdint>
#include <optional>

namespace ql::cpu {

struct DriverOptions {
    unsigned threads = 1;
    std::int64_t chunkElements = 1 << 16;
};

struct DriverOutput {
    QuantParams params;
    Codes codes;
    /// With statistics: the analysis of these codes, measured in the quantize loop, and with importance
    /// weights their weighted error sums.
    std::optional<TensorAnalysis> analysis;
    std::optional<WeightedError> weighted;
    double prepareMs = 0;    // code-buffer allocation, and calibration passes that run before quantizing
    double kernelMs = 0;     // the quantize loop, the statistics' counting included
    double statisticsMs = 0; // the statistics' slices merged, after the kernels
    int passes = 0;          // reads of the input from memory
};

/// Runs one repetition of `job`, with `statistics` (may be null) measured as it goes. Progress goes
/// from `base` to `base + span`; throws
/// Cancelled when it returns false and QuantError for a bad job (the same checks as the reference).
DriverOutput runJob(const BackendTask& job, const DriverOptions& options, const StatisticsRequest* statistics,
                    const ProgressFn& progress, double base, double span);

} // namespace ql::cpu
