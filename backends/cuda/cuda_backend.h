#pragma once
// cuda: quantizes on an NVIDIA GPU with kernels for every preset, layout and target, bit-exact with
// cpu-reference (DESIGN "Backends and jobs"). Timings come from CUDA events.
#include "backend/backend.h"

#include <optional>
#include <string>

namespace ql {

class CudaBackend : public Backend {
public:
    /// Reads QUANTLENS_CUDA_DEVICE (default 0) now; the device is probed on first use, once per process.
    CudaBackend();

    std::string name() const override { return "cuda"; }
    /// "NVIDIA H100 80GB HBM3 (device 0, sm_90, 79.1 GiB)", or "NVIDIA GPU (not available)".
    std::string deviceDescription() const override;
    /// No driver, no GPU, a bad QUANTLENS_CUDA_DEVICE, or a GPU this build has no kernels for.
    std::optional<std::string> unavailableReason() const override;
    /// The unavailability reason, else what of the plan the kernels cannot take (a last dimension
    /// of 2^31 elements or more, a tensor larger than the device's memory).
    std::optional<std::string> supports(const QuantPlan& plan) const override;
    /// Calibrates on the host when job.params is absent (as cpu-reference does), checks the
    /// parameters, then uploads, runs the kernel and downloads `repeat` times, each run with its own
    /// stream and buffers. f32 input is uploaded as is, bf16 / f16 tensors as their 2-byte bits.
    /// Throws QuantError for a bad job or a failing CUDA call (all resources released), Cancelled.
    Result run(const Job& job, const ProgressFn& progress = {}) const override;

private:
    int m_device = 0;
    std::optional<std::string> m_configError;
};

} // namespace ql
