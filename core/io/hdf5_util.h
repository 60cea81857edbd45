#pragma once
// Small helpers around the HDF5 C API: owned ids, one lock (Debian's libhdf5 is not thread-safe and
// the GUI loads off its main thread), and library errors turned into FileError instead of the
// error stack HDF5 prints to stderr by default.
#include "tensor/dtype.h"

#include <hdf5.h>
#include <mutex>
#include <string>

namespace ql::h5 {

/// Held around every HDF5 call; also silences the automatic error printing.
class Lock {
public:
    Lock();
    /// In a child just forked while the parent held the lock: a fresh, unlocked lock for its one
    /// thread (the parent's lock object is left to the parent).
    static void resetInForkedChild();

private:
    std::lock_guard<std::recursive_mutex> m_guard;
};

/// An HDF5 id closed with the matching H5?close on destruction.
class Id {
public:
    using Closer = herr_t (*)(hid_t);
    Id() = default;
    Id(hid_t id, Closer close)
        : m_id(id)
        , m_close(close) {}
    ~Id() { reset(); }
    Id(Id&& o) noexcept
        : m_id(o.m_id)
        , m_close(o.m_close) {
        o.m_id = H5I_INVALID_HID;
    }
    Id& operator=(Id&& o) noexcept;
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    hid_t get() const { return m_id; }
    bool valid() const { return m_id >= 0; }
    void reset();
    /// Gives up ownership without closing.
    hid_t release() {
        const hid_t id = m_id;
        m_id = H5I_INVALID_HID;
        return id;
    }

private:
    hid_t m_id = H5I_INVALID_HID;
    Closer m_close = nullptr;
};

/// The library's own explanation from the current error stack (then cleared), e.g. "file signature not
/// found".
std::string reason();
/// Throws FileError "<file>: <what>: <library reason>" when id < 0; otherwise wraps it.
Id check(hid_t id, Id::Closer close, const std::string& file, const std::string& what);
void check(herr_t status, const std::string& file, const std::string& what);

/// The file type for one of our dtypes (little-endian IEEE / two's complement).
hid_t fileTypeOf(DType t, const std::string& file);

} // namespace ql::h5
