#include "io/hdf5_util.h"

#include "base/error.h"

#include <new>
#include <vector>

namespace ql::h5 {
namespace {

std::recursive_mutex& mutex() {
    static std::recursive_mutex m;
    return m;
}

// libhdf5 tears itself down at exit and tries to flush files a failed write left open (a full
// disk): that crashes. QuantLens closes every id itself, so the library's exit hook is turned off
// before its first use.
bool g_noAtExit = [] {
    H5dont_atexit();
    return true;
}();

herr_t collect(unsigned, const H5E_error2_t* e, void* data) {
    auto* out = static_cast<std::vector<std::string>*>(data);
    if (e->desc && *e->desc) out->emplace_back(e->desc);
    return 0;
}

} // namespace

Lock::Lock()
    : m_guard(mutex()) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

void Lock::resetInForkedChild() {
    // The child has one thread, but the copied mutex still names the parent's thread as its owner.
    new (&mutex()) std::recursive_mutex;
}

Id& Id::operator=(Id&& o) noexcept {
    if (this != &o) {
        reset();
        m_id = o.m_id;
        m_close = o.m_close;
        o.m_id = H5I_INVALID_HID;
    }
    return *this;
}

void Id::reset() {
    if (m_id >= 0 && m_close) m_close(m_id);
    m_id = H5I_INVALID_HID;
}

std::string reason() {
    std::vector<std::string> msgs;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &msgs);
    H5Eclear2(H5E_DEFAULT);
    if (msgs.empty()) return "HDF5 library error";
    // The outermost entry says what failed, the innermost why.
    return msgs.size() == 1 || msgs.front() == msgs.back() ? msgs.front()
                                                           : msgs.front() + " (" + msgs.back() + ")";
}

Id check(hid_t id, Id::Closer close, const std::string& file, const std::string& what) {
    if (id < 0) throw FileError(file + ": " + what + ": " + reason());
    return Id(id, close);
}

void check(herr_t status, const std::string& file, const std::string& what) {
    if (status < 0) throw FileError(file + ": " + what + ": " + reason());
}

hid_t fileTypeOf(DType t, const std::string& file) {
    switch (t) {
    case DType::F64:
        return H5T_IEEE_F64LE;
    case DType::F32:
        return H5T_IEEE_F32LE;
    case DType::I8:
        return H5T_STD_I8LE;
    case DType::U8:
    case DType::Bool:
    case DType::F8E4M3:
    case DType::F8E5M2:
    case DType::E8M0:
        return H5T_STD_U8LE; // raw codes: HDF5 has no 8-bit float types
    case DType::I16:
        return H5T_STD_I16LE;
    case DType::I32:
        return H5T_STD_I32LE;
    case DType::I64:
        return H5T_STD_I64LE;
    default:
        throw FileError(file + ": cannot write " + std::string(nameOf(t)) + " to HDF5");
    }
}

} // namespace ql::h5
