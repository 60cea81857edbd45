#pragma once
// The device side of one quantization: buffers for the input, the codes, the parameters and the
// scale-map tables, filled and launched on one stream. CudaBackend::run and the benchmark's
// kernel-only measurement share it.
#include "cuda/cuda_guards.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_plan.h"
#include "cuda/cuda_staging.h"

#include <cstdint>
#include <memory>

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
    /// Allocates every device buffer (and the pinned staging chunks when the tensor is large).
    /// `map` and `params` are read again by upload(): they must outlive the job.
    DeviceJob(const QuantPlan& plan, const QuantParams& params, const HostScaleMap& map,
              const HostInput& input, cudaStream_t stream);

    /// Enqueues parameters, tables and input (staged through pinned chunks when large).
    void upload(const HostInput& input);
    /// Enqueues the kernel; throws when the launch is refused.
    void launch();
    /// Copies the codes into `codes` (width bytes each); they are there when it returns.
    void download(void* codes);

    std::size_t codeBytes() const { return m_codes.size(); }

private:
    const QuantParams& m_params;
    const HostScaleMap& m_map;
    cudaStream_t m_stream;
    KernelLaunch m_launch{};
    DeviceBuffer m_input, m_codes, m_scales, m_zeroPoints, m_rowBase, m_columnTable;
    std::unique_ptr<StagedCopier> m_staging;
};

} // namespace ql::cuda
