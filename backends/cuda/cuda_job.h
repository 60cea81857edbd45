#pragma once
// The device side of one quantization on a DeviceContext: the input, the scale-map tables and the
// parameters go up, the kernel runs, the codes come down, all on the context's stream and in its
// buffers. CudaBackend::run and the benchmark's kernel-only measurement share it.
#include "cuda/cuda_context.h"
#include "cuda/cuda_device_statistics.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_plan.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ql::cuda {

/// The input as it crosses to the device: f32 values, or bf16 / f16 bits.
struct HostInput {
    const void* data = nullptr;
    InputKind kind = InputKind::F32;
    std::int64_t count = 0;

    std::size_t bytes() const {
        return static_cast<std::size_t>(count) * static_cast<std::size_t>(bytesOf(kind));
    }
};

class DeviceJob {
public:
    /// Takes the context's buffers for this job (growing them when they are too small). `map`
    /// is read again by uploadInput(): it must outlive the job.
    DeviceJob(DeviceContext& context, const ResolvedSpec& plan, const HostScaleMap& map,
              const HostInput& input);

    /// Enqueues the scale-map tables and the input (through the pinned chunks, by `workers` copy
    /// threads, when large) while `alongside` runs on the calling thread (the calibration, say);
    /// returns when both are done. `landed` completes when the input is on the device, however
    /// long `alongside` takes.
    void uploadInput(const HostInput& input, unsigned workers, const std::function<void()>& alongside,
                     const Event& landed);
    /// Whether measureRanges() can run on this job's layout and input (vectors that share a scale).
    bool rangesOnDevice() const;
    /// Every group's finite range [min(0, x), max(0, x)], measured by the range kernel from the
    /// uploaded input, in stream order; `groups` = the plan's scale count. Returns when they are here.
    void measureRanges(std::int64_t groups, std::vector<float>& lo, std::vector<float>& hi);
    /// Enqueues the parameters (checked by the caller); `params` may go once this returns.
    void uploadParams(const QuantParams& params);
    /// Enqueues the kernel; throws when the launch is refused.
    void launch();
    /// Copies the codes into `codes` (width bytes each); they are there when it returns.
    void download(void* codes);
    std::size_t codeBytes() const { return m_codeBytes; }
    /// The input, codes and parameters as the kernel left them, for the statistics passes.
    DeviceTensors tensors() const {
        return {m_input, m_launch.kind, static_cast<const std::uint8_t*>(m_launch.codes), m_launch.args};
    }

private:
    DeviceContext& m_context;
    const HostScaleMap& m_map;
    void* m_input = nullptr;
    void* m_rowBase = nullptr;
    void* m_columnTable = nullptr;
    KernelLaunch m_launch{};
    std::size_t m_codeBytes = 0;
};

} // namespace ql::cuda
