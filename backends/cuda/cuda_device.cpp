#include "cuda/cuda_device.h"

#include "cuda/cuda_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <map>
#include <mutex>

namespace ql::cuda {
namespace {

std::string versionText(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string describe(const cudaDeviceProp& p, int index) {
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(p.totalGlobalMem) / (1 << 30));
    return std::string(p.name) + " (device " + std::to_string(index) + ", sm_" + std::to_string(p.major) +
           std::to_string(p.minor) + ", " + memory + ")";
}

DeviceInfo probe(int index) {
    DeviceInfo info;
    info.index = index;
    // cudaGetDeviceCount alone says "driver version is insufficient" when there is no driver at all.
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        info.unavailable = "no CUDA device: no NVIDIA driver is loaded on this machine";
        return info;
    }
    if (driver < CUDART_VERSION) {
        info.unavailable = "no CUDA device: the NVIDIA driver supports CUDA " + versionText(driver) +
                           ", this build needs CUDA " + versionText(CUDART_VERSION) + " or newer";
        return info;
    }
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        info.unavailable = std::string("no CUDA device: cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
        return info;
    }
    if (count == 0) {
        info.unavailable = "no CUDA device: the driver finds no GPU";
        return info;
    }
    if (index >= count) {
        info.unavailable = "device " + std::to_string(index) +
                           " (QUANTLENS_CUDA_DEVICE) does not exist: CUDA finds " + std::to_string(count) +
                           " device(s)";
        return info;
    }
    cudaDeviceProp props{};
    if (const cudaError_t e = cudaGetDeviceProperties(&props, index); e != cudaSuccess) {
        info.unavailable =
            "cudaGetDeviceProperties(" + std::to_string(index) + ") failed: " + cudaGetErrorString(e);
        return info;
    }
    info.description = describe(props, index);
    info.totalMemory = props.totalGlobalMem;
    // Creates the device's context now, so that the first run's timings do not include it.
    if (const cudaError_t e = cudaSetDevice(index); e != cudaSuccess) {
        info.unavailable = "cudaSetDevice(" + std::to_string(index) + ") failed: " + cudaGetErrorString(e);
        return info;
    }
    if (const cudaError_t e = kernelImageStatus(); e != cudaSuccess)
        info.unavailable = info.description +
                           " cannot run this build's kernels (built for " QL_CUDA_ARCHITECTURES "): " +
                           cudaGetErrorString(e);
    return info;
}

} // namespace

int deviceFromEnvironment(std::optional<std::string>& error) {
    const char* value = std::getenv("QUANTLENS_CUDA_DEVICE");
    if (!value || !*value) return 0;
    char* end = nullptr;
    const long id = std::strtol(value, &end, 10);
    if (*end != '\0' || id < 0 || id > 1023) {
        error = "QUANTLENS_CUDA_DEVICE=" + std::string(value) + " is not a device number";
        return 0;
    }
    return static_cast<int>(id);
}

const DeviceInfo& probeDevice(int index) {
    static std::mutex mutex;
    static std::map<int, DeviceInfo> probed; // node-based: references stay valid
    const std::lock_guard lock(mutex);
    auto it = probed.find(index);
    if (it == probed.end()) it = probed.emplace(index, probe(index)).first;
    return it->second;
}

} // namespace ql::cuda
