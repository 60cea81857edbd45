#include "cuda/cuda_context.h"

namespace ql::cuda {
namespace {

int selectDevice(int device) {
    check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
    return device;
}

} // namespace

DeviceContext::DeviceContext(int device)
    : m_device(selectDevice(device)) {}

DeviceContext::~DeviceContext() {
    cudaSetDevice(m_device); // a destructor on another thread frees on the right device
    m_staging.reset();       // waits for the stream before the pinned chunks go
}

void* DeviceContext::buffer(BufferRole role, std::size_t bytes) {
    DeviceBuffer& b = m_buffers[static_cast<std::size_t>(role)];
    if (b.size() < bytes) {
        b = DeviceBuffer(); // the old one is freed before the larger one is asked for
        b = DeviceBuffer(bytes);
    }
    return bytes ? b.get() : nullptr;
}

Staging& DeviceContext::staging() {
    if (!m_staging)
        m_staging = std::make_unique<Staging>(m_device, m_stream.get(), Staging::defaultWorkers());
    return *m_staging;
}

std::size_t DeviceContext::heldBytes() const {
    std::size_t total = 0;
    for (const DeviceBuffer& b : m_buffers)
        total += b.size();
    return total;
}

} // namespace ql::cuda
