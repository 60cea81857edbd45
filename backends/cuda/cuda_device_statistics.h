#pragma once
// The report's accumulators made on the device (cuda_statistics.h's two passes) from the input and
// codes a DeviceJob left there: only the per-block sums, the counts and the kept clipping rows come
// back over the link. What the device does not measure (int32 codes, more bins than shared memory
// holds) stays with the host's accumulate(); the importance-weighted sums are the host's too.
#include "analysis/accumulators.h"
#include "cuda/cuda_context.h"
#include "cuda/cuda_kernels.h"

namespace ql::cuda {

/// Where one job's tensors sit on the device after its quantize kernel.
struct DeviceTensors {
    const void* input;
    InputKind kind;
    const std::uint8_t* codes; // one byte each
    QuantizeArgs args;         // map, scales and zero points in device memory; count
};

/// Whether deviceStatistics() can fill `request` for `plan`.
bool statisticsOnDevice(const ResolvedSpec& plan, const StatisticsRequest& request);

/// The accumulators for the codes on the device, equal to accumulate()'s (counts and histograms
/// exactly, sums within 1e-10 relative) but the weighted sums, which the caller adds when asked
/// (accumulateWeighted); `codes` is the host copy (sizes are checked against it).
TensorAccumulators deviceStatistics(DeviceContext& context, const DeviceTensors& tensors,
                                    const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                    const StatisticsRequest& request);

} // namespace ql::cuda
