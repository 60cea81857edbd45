#include "io/hdf5_source.h"

#include "base/error.h"
#include "io/child_process.h"
#include "io/hdf5_util.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>

namespace ql {
namespace {

struct TypeMatch {
    bool ok = false;
    DType dtype = DType::F32;
    std::string why; // when !ok
};

std::string className(H5T_class_t c) {
    switch (c) {
    case H5T_STRING:
        return "string";
    case H5T_COMPOUND:
        return "compound";
    case H5T_VLEN:
        return "variable-length";
    case H5T_ARRAY:
        return "array";
    case H5T_REFERENCE:
        return "reference";
    case H5T_OPAQUE:
        return "opaque";
    case H5T_BITFIELD:
        return "bitfield";
    case H5T_TIME:
        return "time";
    case H5T_ENUM:
        return "enum";
    default:
        return "unknown";
    }
}

TypeMatch classify(hid_t type) {
    const H5T_class_t cls = H5Tget_class(type);
    const std::size_t size = H5Tget_size(type);
    if (cls == H5T_FLOAT) {
        if (size == 8) return {true, DType::F64, {}};
        if (size == 4) return {true, DType::F32, {}};
        if (size == 2) {
            std::size_t spos, epos, esize, mpos, msize;
            H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize);
            if (esize == 5 && msize == 10) return {true, DType::F16, {}};
            if (esize == 8 && msize == 7) return {true, DType::BF16, {}};
        }
        return {false, DType::F32, "unsupported type: " + std::to_string(size * 8) + "-bit float layout"};
    }
    if (cls == H5T_INTEGER) {
        const bool sign = H5Tget_sign(type) == H5T_SGN_2;
        switch (size) {
        case 1:
            return {true, sign ? DType::I8 : DType::U8, {}};
        case 2:
            return {true, sign ? DType::I16 : DType::I32, {}}; // uint16 widened: no U16 dtype
        case 4:
            return {true, sign ? DType::I32 : DType::I64, {}}; // uint32 widened
        case 8:
            if (sign) return {true, DType::I64, {}};
            return {false, DType::I64, "unsupported type: uint64 (values may not fit int64)"};
        default:
            break;
        }
        return {false, DType::I64, "unsupported type: " + std::to_string(size * 8) + "-bit integer"};
    }
    if (cls == H5T_ENUM && size == 1 && H5Tget_nmembers(type) == 2) {
        // h5py stores numpy bool as an int8 enum {FALSE=0, TRUE=1}.
        char* a = H5Tget_member_name(type, 0);
        char* b = H5Tget_member_name(type, 1);
        const bool isBool = a && b && std::strcmp(a, "FALSE") == 0 && std::strcmp(b, "TRUE") == 0;
        H5free_memory(a);
        H5free_memory(b);
        if (isBool) return {true, DType::Bool, {}};
    }
    return {false, DType::F32, "unsupported type: " + className(cls)};
}

// The in-memory type to read into: native for plain numbers, little-endian copies for 16-bit floats
// and bool enums (HDF5 has no native half or bfloat16).
h5::Id memoryType(hid_t fileType, DType dtype) {
    switch (dtype) {
    case DType::F64:
        return h5::Id(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
    case DType::F32:
        return h5::Id(H5Tcopy(H5T_NATIVE_FLOAT), H5Tclose);
    case DType::I8:
        return h5::Id(H5Tcopy(H5T_NATIVE_INT8), H5Tclose);
    case DType::U8:
        return h5::Id(H5Tcopy(H5T_NATIVE_UINT8), H5Tclose);
    case DType::I16:
        return h5::Id(H5Tcopy(H5T_NATIVE_INT16), H5Tclose);
    case DType::I32:
        return h5::Id(H5Tcopy(H5T_NATIVE_INT32), H5Tclose);
    case DType::I64:
        return h5::Id(H5Tcopy(H5T_NATIVE_INT64), H5Tclose);
    default: {
        h5::Id t(H5Tcopy(fileType), H5Tclose);
        if (dtype != DType::Bool) H5Tset_order(t.get(), H5T_ORDER_LE);
        return t;
    }
    }
}

std::string storageNote(hid_t dset) {
    h5::Id plist(H5Dget_create_plist(dset), H5Pclose);
    if (!plist.valid()) return {};
    std::string note;
    switch (H5Pget_layout(plist.get())) {
    case H5D_CHUNKED:
        note = "chunked";
        break;
    case H5D_COMPACT:
        note = "compact";
        break;
    default:
        note = "contiguous";
        break;
    }
    const int n = H5Pget_nfilters(plist.get());
    for (int i = 0; i < n; ++i) {
        unsigned flags = 0;
        std::size_t nelem = 0;
        char name[64] = {};
        unsigned config = 0;
        const H5Z_filter_t f = H5Pget_filter2(plist.get(), static_cast<unsigned>(i), &flags, &nelem, nullptr,
                                              sizeof(name), name, &config);
        note += f == H5Z_FILTER_DEFLATE ? ", gzip" : std::string(", ") + (name[0] ? name : "filter");
    }
    return note;
}

// Raw data kept outside the file (external storage, virtual datasets) could read any file on the
// machine: refused, with the reason.
std::optional<std::string> outsideStorage(hid_t dataset) {
    h5::Id plist(H5Dget_create_plist(dataset), H5Pclose);
    if (!plist.valid()) return std::string("cannot read its storage properties");
    if (H5Pget_external_count(plist.get()) > 0)
        return std::string("its raw data is stored in an external file, outside the model: refused");
    if (H5Pget_layout(plist.get()) == H5D_VIRTUAL)
        return std::string("a virtual dataset (its data lives in other files): refused");
    return std::nullopt;
}

// Storage never written reads back as the fill value: a few bytes of file could stand for gigabytes
// of a tensor no one stored. Refused, with the reason: every chunk (or the contiguous block) must be
// in the file.
std::optional<std::string> unwrittenStorage(hid_t dataset, hid_t type, const std::vector<hsize_t>& dims) {
    hsize_t elements = 1;
    for (hsize_t d : dims)
        elements *= d; // checked against overflow by the caller
    if (elements == 0) return std::nullopt;
    h5::Id plist(H5Dget_create_plist(dataset), H5Pclose);
    if (!plist.valid()) return std::string("cannot read its storage properties");
    switch (H5Pget_layout(plist.get())) {
    case H5D_CHUNKED: {
        std::vector<hsize_t> chunk(dims.size(), 1);
        if (H5Pget_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()) < 0)
            return std::string("cannot read its chunk shape");
        hsize_t expected = 1;
        for (std::size_t i = 0; i < dims.size(); ++i) {
            if (chunk[i] == 0) return std::string("its chunk shape has a zero dimension");
            expected *= (dims[i] + chunk[i] - 1) / chunk[i]; // at most the element count
        }
        hsize_t written = 0;
        h5::Id space(H5Dget_space(dataset), H5Sclose);
        if (!space.valid() || H5Dget_num_chunks(dataset, space.get(), &written) < 0)
            return std::string("cannot count its chunks");
        if (written < expected)
            return "only " + std::to_string(written) + " of its " + std::to_string(expected) +
                   " chunks were written (the rest would read as the fill value): refused";
        return std::nullopt;
    }
    case H5D_CONTIGUOUS:
        if (H5Dget_storage_size(dataset) < elements * H5Tget_size(type))
            return std::string("its data was never written (it would read as the fill value): refused");
        return std::nullopt;
    default:
        return std::nullopt; // compact: the data is in the object header itself
    }
}

// A compressed dataset's values against the bytes it is stored in: deflate reaches 1032:1 on zeros, so
// a 4 MB file could hold 4 GB of a tensor no one could have meant (real weights compress a few times
// at most). Past this ratio (and a small allowance, for zero biases) a dataset is left out, said why,
// and never read: neither by the probe nor by a run.
constexpr std::uint64_t kMaxExpansion = 128;
constexpr std::uint64_t kExpansionAllowance = 1ULL << 20;

std::optional<std::string> overExpanded(hid_t dataset, std::uint64_t bytes) {
    const std::uint64_t stored = H5Dget_storage_size(dataset);
    if (bytes <= kExpansionAllowance || stored >= bytes / kMaxExpansion) return std::nullopt;
    return "its " + std::to_string(bytes) + " bytes would be decompressed from " + std::to_string(stored) +
           " stored (more than " + std::to_string(kMaxExpansion) +
           " to 1: crafted, not weights): refused, never read";
}

struct Visit {
    std::vector<TensorInfo>* infos;
    std::vector<UnlistedEntry>* skipped;
};

herr_t visitLink(hid_t group, const char* name, const H5L_info_t* info, void* data) {
    if (info->type != H5L_TYPE_HARD)
        return 0; // soft/external links would list objects twice or leave the file
    h5::Id obj(H5Oopen(group, name, H5P_DEFAULT), H5Oclose);
    if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    auto* v = static_cast<Visit*>(data);
    h5::Id type(H5Dget_type(obj.get()), H5Tclose);
    h5::Id space(H5Dget_space(obj.get()), H5Sclose);
    const TypeMatch m = classify(type.get());
    const H5S_class_t sc = H5Sget_simple_extent_type(space.get());
    if (!m.ok || sc == H5S_NULL) {
        v->skipped->push_back({name, m.ok ? "empty (null) dataspace" : m.why});
        return 0;
    }
    TensorInfo t;
    t.name = name;
    t.dtype = m.dtype;
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
    if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    // Sizes from the file are checked before anything multiplies or allocates with them.
    std::uint64_t bytes = static_cast<std::uint64_t>(storageBytes(m.dtype));
    for (hsize_t d : dims) {
        if (d > static_cast<hsize_t>(INT64_MAX) ||
            __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes) ||
            bytes > static_cast<std::uint64_t>(INT64_MAX)) {
            v->skipped->push_back({name, "its size overflows (dimensions from the file are too large)"});
            return 0;
        }
        t.shape.push_back(static_cast<std::int64_t>(d));
    }
    if (!dimensionsFit(t.shape, static_cast<std::uint64_t>(storageBytes(m.dtype)))) {
        v->skipped->push_back({name, "its size overflows (dimensions from the file are too large)"});
        return 0;
    }
    if (auto why = outsideStorage(obj.get())) {
        v->skipped->push_back({name, *why});
        return 0;
    }
    if (auto why = unwrittenStorage(obj.get(), type.get(), dims)) {
        H5Eclear2(H5E_DEFAULT);
        v->skipped->push_back({name, *why});
        return 0;
    }
    if (auto why = overExpanded(obj.get(), bytes)) {
        v->skipped->push_back({name, *why});
        return 0;
    }
    t.byteSize = bytes;
    t.location = "/" + t.name + " (" + storageNote(obj.get()) + ")";
    v->infos->push_back(std::move(t));
    return 0;
}

} // namespace

std::unique_ptr<Hdf5Source> Hdf5Source::open(const std::string& path) {
    h5::Lock lock;
#if H5_VERSION_GE(1, 12, 0)
    const htri_t accessible = H5Fis_accessible(path.c_str(), H5P_DEFAULT);
#else
    const htri_t accessible = H5Fis_hdf5(path.c_str());
#endif
    if (accessible <= 0) {
        const std::string why = h5::reason();
        throw FileError(path + ": not an HDF5 file" + (accessible < 0 ? " (" + why + ")" : std::string()));
    }
    h5::Id file = h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, path,
                            "not a readable HDF5 file (truncated or corrupt?)");
    std::unique_ptr<Hdf5Source> src(new Hdf5Source);
    src->m_path = path;
    Visit v{&src->m_infos, &src->m_skipped};
    h5::check(H5Lvisit(file.get(), H5_INDEX_NAME, H5_ITER_INC, visitLink, &v), path,
              "cannot walk the groups");
    for (std::size_t i = 0; i < src->m_infos.size(); ++i)
        src->m_index.emplace(src->m_infos[i].name, i);
    src->m_file = file.release(); // closed in the destructor
    return src;
}

Hdf5Source::~Hdf5Source() {
    h5::Lock lock;
    if (m_file >= 0) H5Fclose(static_cast<hid_t>(m_file));
}

Tensor Hdf5Source::load(const std::string& name) const {
    return read(name, 0, 0, false);
}

Tensor Hdf5Source::loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const {
    return read(name, begin, count, true);
}

Tensor Hdf5Source::read(const std::string& name, std::int64_t begin, std::int64_t count, bool rows) const {
    const auto it = m_index.find(name);
    if (it == m_index.end()) {
        if (const UnlistedEntry* u = findUnlisted(name))
            throw FileError(m_path + ": dataset '" + name + "': " + u->reason);
        throw FileError(m_path + ": no dataset named '" + name + "'");
    }
    const TensorInfo& info = m_infos[it->second];
    const std::string what = "dataset '" + name + "'";
    Shape shape = info.shape;
    if (rows) {
        if (shape.empty()) throw FileError(m_path + ": " + what + ": a scalar has no rows");
        if (begin < 0 || count < 0 || begin > shape[0] || count > shape[0] - begin)
            throw FileError(m_path + ": " + what + ": rows [" + std::to_string(begin) + ", " +
                            std::to_string(begin + count) + ") are outside " + toString(shape));
        shape[0] = count;
    }
    Tensor out(info.dtype, shape);
    if (out.elementCount() == 0) return out;

    h5::Lock lock;
    h5::Id dset = h5::check(H5Dopen2(static_cast<hid_t>(m_file), name.c_str(), H5P_DEFAULT), H5Dclose, m_path,
                            "cannot open " + what);
    h5::Id ftype(H5Dget_type(dset.get()), H5Tclose);
    h5::Id mtype = memoryType(ftype.get(), info.dtype);
    h5::Id fspace = h5::check(H5Dget_space(dset.get()), H5Sclose, m_path, what);
    hid_t memSpace = H5S_ALL, fileSpace = H5S_ALL;
    h5::Id mspace;
    if (rows) {
        std::vector<hsize_t> start(shape.size(), 0), cnt(shape.begin(), shape.end());
        start[0] = static_cast<hsize_t>(begin);
        h5::check(
            H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, cnt.data(), nullptr),
            m_path, what + ": selecting rows");
        mspace = h5::check(H5Screate_simple(static_cast<int>(cnt.size()), cnt.data(), nullptr), H5Sclose,
                           m_path, what);
        memSpace = mspace.get();
        fileSpace = fspace.get();
    }
    h5::check(H5Dread(dset.get(), mtype.get(), memSpace, fileSpace, H5P_DEFAULT, out.mutableData()), m_path,
              "reading " + what);
    return out;
}

namespace {

// libhdf5 (1.10) can crash on a corrupt file, in its metadata reads or its data reads. A file from
// the internet is therefore opened and read whole in a child process first; only if the child ends
// normally does this process touch it. The HDF5 lock is held across fork(), so no other thread is
// inside the library when the child starts.
// A minute, plus the file's size at 20 MB/s: a large model is slow to read, not crafted.
int probeTimeoutMs(const std::string& path) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    const double ms = 60000.0 + (ec ? 0.0 : static_cast<double>(bytes) / 20e3);
    return static_cast<int>(std::min(ms, 3.6e6)); // at most an hour
}

void probeInChild(const std::string& path) {
    h5::Lock lock;
    runInChild(
        [&] {
            h5::Lock::resetInForkedChild();
            const auto source = Hdf5Source::open(path);
            for (const auto& t : source->tensors())
                (void)source->load(t.name);
        },
        probeTimeoutMs(path), path, "the HDF5 library crashed reading this file: it is corrupt or crafted");
}

} // namespace

std::unique_ptr<TensorSource> openHdf5Source(const std::string& path) {
    probeInChild(path);
    return Hdf5Source::open(path);
}

std::optional<std::string> Hdf5Source::textAttribute(const std::string& object,
                                                     const std::string& key) const {
    h5::Lock lock;
    const hid_t file = static_cast<hid_t>(m_file);
    const std::string path = object.empty() ? std::string(".") : object;
    if (!object.empty() && H5Lexists(file, object.c_str(), H5P_DEFAULT) <= 0) return std::nullopt;
    if (H5Aexists_by_name(file, path.c_str(), key.c_str(), H5P_DEFAULT) <= 0) return std::nullopt;
    h5::Id attr(H5Aopen_by_name(file, path.c_str(), key.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (attr.get() < 0) return std::nullopt;
    h5::Id type(H5Aget_type(attr.get()), H5Tclose);
    h5::Id space(H5Aget_space(attr.get()), H5Sclose);
    // One variable-length string (what QuantLens and h5py write); anything else is not text here.
    if (type.get() < 0 || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0 ||
        space.get() < 0 || H5Sget_simple_extent_npoints(space.get()) != 1)
        return std::nullopt;
    h5::Id memType(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memType.get(), H5T_VARIABLE);
    H5Tset_cset(memType.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Aread(attr.get(), memType.get(), &text) < 0 || !text) return std::nullopt;
    std::string out(text);
    H5free_memory(text);
    return out;
}

} // namespace ql
