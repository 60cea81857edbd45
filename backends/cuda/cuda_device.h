#pragma once
// Which GPU the cuda backend uses and whether it can: probed once per process and device index.
#include <cstddef>
#include <optional>
#include <string>

namespace ql::cuda {

struct DeviceInfo {
    int index = 0;
    /// Why the device cannot be used (no driver, no GPU, bad index, no kernel image); nullopt if usable.
    std::optional<std::string> unavailable;
    /// "NVIDIA H100 80GB HBM3 (device 0, sm_90, 79.1 GiB)" when usable.
    std::string description;
    std::size_t totalMemory = 0;
};

/// QUANTLENS_CUDA_DEVICE (default 0). `error` is set when the variable is not a device number.
int deviceFromEnvironment(std::optional<std::string>& error);

/// Probes `index`: driver, device count, properties, and a kernel image this build can run there.
/// Cached per index for the life of the process (the answer cannot change while it runs).
const DeviceInfo& probeDevice(int index);

} // namespace ql::cuda
