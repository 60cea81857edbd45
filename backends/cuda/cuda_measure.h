#pragma once
// Device-side measurements for bench/bench_cuda, without CUDA types: the copy bandwidth the GPU's
// memory gives, and the quantize kernel alone on data already in device memory. Both use the
// device the cuda backend uses (QUANTLENS_CUDA_DEVICE) and time with CUDA events.
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "tensor/tensor.h"

#include <cstddef>

namespace ql::cuda {

/// Best of `repeat` device-to-device cudaMemcpy of `bytes`, in milliseconds.
double bestCopyMs(std::size_t bytes, int repeat);

/// Best of `repeat` copies of `bytes` between pinned host memory and the device (to the device when
/// `toDevice`), in milliseconds: the transfer bound a job's upload and download are measured against.
double bestPinnedCopyMs(std::size_t bytes, bool toDevice, int repeat);

/// Best of `repeat` launches of the quantize kernel over `input` (F32, BF16 or F16), in ms.
/// The first launch's codes are checked against `expected` (pass empty Codes to skip).
double bestKernelMs(const ResolvedSpec& plan, const QuantParams& params, const Tensor& input, int repeat,
                    const Codes& expected);

} // namespace ql::cuda
