#pragma once
// RAII owners for every CANN resource a run takes, so that each error path (a failed call, a
// cancel, an exception from QuantLens itself) releases exactly what was acquired, in reverse order.
#include "ascend/ascend_runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace ql {

/// A CANN call failed during a run; the message names the call and its error code.
class AscendError : public std::runtime_error {
public:
    AscendError(const std::string& call, long code)
        : std::runtime_error("ascend: " + call + " failed with error " + std::to_string(code))
        , m_code(code) {}
    /// A call that reports failure without a code (aclCreateTensor returns NULL): code() is -1.
    explicit AscendError(const std::string& message)
        : std::runtime_error("ascend: " + message)
        , m_code(-1) {}
    long code() const { return m_code; }

private:
    long m_code;
};

inline void aclCheck(long status, const std::string& call) {
    if (status != 0) throw AscendError(call, status);
}

/// aclrtSetDevice for the life of a run; aclrtResetDevice after (the NN sample's pairing).
class DeviceScope {
public:
    DeviceScope(const AclApi& api, std::int32_t device)
        : m_api(api)
        , m_device(device) {
        aclCheck(m_api.setDevice(device), "aclrtSetDevice(" + std::to_string(device) + ")");
    }
    ~DeviceScope() { m_api.resetDevice(m_device); }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    const AclApi& m_api;
    std::int32_t m_device;
};

class StreamGuard {
public:
    explicit StreamGuard(const AclApi& api)
        : m_api(api) {
        aclCheck(m_api.createStream(&m_stream), "aclrtCreateStream");
    }
    ~StreamGuard() {
        if (m_stream) m_api.destroyStream(m_stream);
    }
    StreamGuard(const StreamGuard&) = delete;
    StreamGuard& operator=(const StreamGuard&) = delete;
    aclrtStream get() const { return m_stream; }

private:
    const AclApi& m_api;
    aclrtStream m_stream = nullptr;
};

/// Device memory from aclrtMalloc (32-byte aligned, which aclCreateTensor requires).
class DeviceBuffer {
public:
    DeviceBuffer(const AclApi& api, std::size_t bytes)
        : m_api(&api)
        , m_bytes(bytes) {
        aclCheck(m_api->malloc(&m_ptr, bytes, acl::kMallocHugeFirst),
                 "aclrtMalloc(" + std::to_string(bytes) + " bytes)");
    }
    ~DeviceBuffer() {
        if (m_ptr) m_api->free(m_ptr);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : m_api(o.m_api)
        , m_ptr(std::exchange(o.m_ptr, nullptr))
        , m_bytes(o.m_bytes) {}
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(DeviceBuffer&&) = delete;
    void* get() const { return m_ptr; }
    std::size_t size() const { return m_bytes; }

private:
    const AclApi* m_api;
    void* m_ptr = nullptr;
    std::size_t m_bytes;
};

/// An aclTensor descriptor; destroying it does not free the device memory it points at.
class TensorGuard {
public:
    TensorGuard(const AclApi& api, aclTensor* tensor, const std::string& what)
        : m_api(&api)
        , m_tensor(tensor) {
        if (!m_tensor) throw AscendError("aclCreateTensor(" + what + ") returned NULL");
    }
    ~TensorGuard() {
        if (m_tensor) m_api->destroyTensor(m_tensor);
    }
    TensorGuard(TensorGuard&& o) noexcept
        : m_api(o.m_api)
        , m_tensor(std::exchange(o.m_tensor, nullptr)) {}
    TensorGuard(const TensorGuard&) = delete;
    TensorGuard& operator=(const TensorGuard&) = delete;
    TensorGuard& operator=(TensorGuard&&) = delete;
    aclTensor* get() const { return m_tensor; }

private:
    const AclApi* m_api;
    aclTensor* m_tensor;
};

} // namespace ql
