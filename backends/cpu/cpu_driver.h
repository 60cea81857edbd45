#pragma once
// The cpu backend's job driver: walks any layout as rows of constant-scale runs, splits the work
// into chunks over threads, and fuses calibration, quantization and error sums into as few passes
// over the input as the layout allows (one read when each row owns its scale groups).
#include "backend/backend.h"
#include "cpu/kernels.h"

#include <cstdint>

namespace ql::cpu {

struct DriverOptions {
    unsigned threads = 1;
    std::int64_t chunkElements = 1 << 16;
};

struct DriverOutput {
    QuantParams params;
    Codes codes;
    ErrorSums errors;     // filled when measuring
    double prepareMs = 0; // code-buffer allocation, and calibration passes that run before quantizing
    double kernelMs = 0;
    int passes = 0; // reads of the input from memory
};

/// Runs one repetition of `job`. Progress goes from `base` to `base + span`; throws Cancelled when
/// it returns false and QuantError for a bad job (the same checks as the reference).
DriverOutput runJob(const BackendTask& job, const DriverOptions& options, bool measure,
                    const ProgressFn& progress, double base, double span);

/// Error metrics from the sums (definitions as ql::ErrorStats).
double mse(const ErrorSums& s);
double sqnrDb(const ErrorSums& s);
double cosine(const ErrorSums& s);

} // namespace ql::cpu
