#pragma once
// cuda: quantizes on an NVIDIA GPU with kernels for every preset, layout and target, bit-exact with
// cpu-reference. Timings come from CUDA events.
#include "backend/backend.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace ql {
namespace cuda {
class DeviceContext;
}

class CudaBackend : public Backend {
public:
    /// Reads QUANTLENS_CUDA_DEVICE (default 0) now; the device is probed on first use, once per process.
    CudaBackend();
    /// Releases the device context (stream, buffers, pinned chunks).
    ~CudaBackend() override;

    std::string name() const override { return "cuda"; }
    /// "NVIDIA H100 80GB HBM3 (device 0, sm_90, 79.1 GiB)", or "NVIDIA GPU (not available)".
    std::string deviceDescription() const override;
    /// No driver, no GPU, a bad QUANTLENS_CUDA_DEVICE, or a GPU this build has no kernels for.
    std::optional<std::string> unavailableReason() const override;
    /// The unavailability reason, else what of the plan the kernels cannot take (a last dimension
    /// of 2^31 elements or more, a tensor larger than the device's memory).
    std::optional<std::string> supports(const ResolvedSpec& plan) const override;
    /// Uploads the input in its own dtype (f32, or bf16 / f16 bits) while the host calibrates from
    /// the same view when job.params is absent (calibrateFast: cpu-reference's answer, bit for bit),
    /// then runs the kernel and downloads the codes, `repeat` times. Jobs run one at a time on a
    /// device context kept across jobs (its stream, buffers and pinned chunks); timings: prepare is
    /// the calibration, which overlaps the upload. Throws QuantError for a bad job or a failing CUDA
    /// call (the context is then dropped and the next job starts a fresh one), Cancelled.
    Result run(const BackendTask& job, const ProgressFn& progress = {}) const override;

    /// Creates the device context on a thread of its own (the GPU's start takes a good part of a
    /// second on some machines); run() waits for it.
    void prepare() const override;

    /// Device memory the kept context holds now (0 before the first job).
    std::size_t deviceBytesHeld() const;

private:
    cuda::DeviceContext& context() const; // m_mutex held

    int m_device = 0;
    std::optional<std::string> m_configError;
    mutable std::mutex m_mutex;
    mutable std::unique_ptr<cuda::DeviceContext> m_context;
    mutable std::jthread m_preparing; // last: joined before the context goes
};

} // namespace ql
