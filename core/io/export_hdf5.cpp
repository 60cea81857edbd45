// exportHdf5: one group per tensor with codes, scale and zero point datasets and the plan as attributes.
#include "base/error.h"
#include "io/atomic_file.h"
#include "io/export.h"
#include "io/export_tensors.h"
#include "io/hdf5_util.h"
#include "quant/spec_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ql {
namespace {

void writeStringAttribute(hid_t obj, const char* name, const std::string& value, const std::string& file) {
    // Variable-length UTF-8, which h5py reads back as str.
    h5::Id type = h5::check(H5Tcopy(H5T_C_S1), H5Tclose, file, "string type");
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    h5::Id space = h5::check(H5Screate(H5S_SCALAR), H5Sclose, file, "attribute space");
    h5::Id attr = h5::check(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                            H5Aclose, file, std::string("attribute ") + name);
    const char* p = value.c_str();
    h5::check(H5Awrite(attr.get(), type.get(), &p), file, std::string("writing attribute ") + name);
}

void writeDataset(hid_t group, const char* name, const Tensor& t, const std::string& file,
                  const std::string& tensor, hid_t lcpl = H5P_DEFAULT) {
    const std::string what = "tensor '" + tensor + "': dataset " + name;
    std::vector<hsize_t> dims(t.shape().begin(), t.shape().end());
    h5::Id space = dims.empty()
                       ? h5::check(H5Screate(H5S_SCALAR), H5Sclose, file, what)
                       : h5::check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                                   H5Sclose, file, what);
    h5::Id dcpl = h5::check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, file, what);
    // Large code arrays compress well (few distinct values); chunks of whole rows, about 1 MiB each.
    const bool big = t.byteSize() >= (1u << 20) && !dims.empty() && t.elementCount() > 0;
    if (big && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
        std::vector<hsize_t> chunk = dims;
        const hsize_t rowBytes = t.byteSize() / dims[0];
        chunk[0] = std::clamp<hsize_t>((1u << 20) / std::max<hsize_t>(rowBytes, 1), 1, dims[0]);
        if (rowBytes * chunk[0] < (1ull << 31)) {
            H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
            H5Pset_deflate(dcpl.get(), 4);
        }
    }
    const hid_t type = h5::fileTypeOf(t.dtype(), file);
    h5::Id dset = h5::check(H5Dcreate2(group, name, type, space.get(), lcpl, dcpl.get(), H5P_DEFAULT),
                            H5Dclose, file, what);
    if (t.elementCount() > 0)
        h5::check(H5Dwrite(dset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data()), file,
                  "writing " + what);
    if (t.dtype() == DType::F8E4M3 || t.dtype() == DType::F8E5M2)
        writeStringAttribute(dset.get(), "encoding", std::string(nameOf(t.dtype())) + " codes", file);
}

// A tensor passed through unquantized: its values as they were, at the path its name gives.
// 16-bit floats are widened to f32 (exactly): this HDF5 writer has no 16-bit float type.
void writeKeptDataset(hid_t file, hid_t lcpl, const NamedTensor& k, const std::string& path) {
    const DType d = k.tensor.dtype();
    const bool widen = d == DType::F16 || d == DType::BF16;
    const Tensor values = widen ? Tensor::fromFloats(k.tensor.shape(), k.tensor.toFloatVector()) : k.tensor;
    writeDataset(file, k.name.c_str(), values, path, k.name, lcpl);
    h5::Id dset =
        h5::check(H5Dopen2(file, k.name.c_str(), H5P_DEFAULT), H5Dclose, path, "tensor '" + k.name + "'");
    writeStringAttribute(dset.get(), "quantlens",
                         widen ? "kept unquantized, widened from " + std::string(nameOf(d)) + " to f32"
                               : std::string("kept unquantized"),
                         path);
}

} // namespace

void exportHdf5(const std::string& path, const std::vector<QuantizedTensor>& tensors,
                const std::string& sourcePath, const ExportExtras& extras) {
    refuseOverwritingSource(path, sourcePath);
    for (const auto& q : tensors)
        checkQuantizedTensor(q, path);
    AtomicFile out(path, sourcePath);
    {
        h5::Lock lock;
        h5::Id file = h5::check(H5Fcreate(out.tempPath().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                                H5Fclose, path, "cannot create");
        nlohmann::json meta = {{"format", "quantlens-export"}, {"version", 1}};
        for (const auto& k : extras.kept)
            meta["kept"].push_back(k.name);
        for (const auto& [name, reason] : extras.failed)
            meta["failed"].push_back({{"name", name}, {"reason", reason}});
        writeStringAttribute(file.get(), "quantlens", meta.dump(), path);
        h5::Id lcpl = h5::check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, path, "link properties");
        H5Pset_create_intermediate_group(lcpl.get(), 1); // names with '/' become nested groups
        for (const auto& q : tensors) {
            h5::Id group =
                h5::check(H5Gcreate2(file.get(), q.name.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                          H5Gclose, path, "tensor '" + q.name + "': cannot create its group");
            Tensor codes = codesTensor(q);
            writeDataset(group.get(), "codes", codes, path, q.name);
            ScaleTensors s = scaleTensors(q, path);
            writeDataset(group.get(), "scale", s.scale, path, q.name);
            if (s.hasZeroPoint()) writeDataset(group.get(), "zero_point", s.zeroPoint, path, q.name);
            if (s.hasGlobalScale()) writeDataset(group.get(), "global_scale", s.globalScale, path, q.name);
            writeStringAttribute(group.get(), "name", q.name, path);
            writeStringAttribute(group.get(), "target", std::string(nameOf(q.codes.target())), path);
            writeStringAttribute(group.get(), "scale_encoding", s.encoding, path);
            writeStringAttribute(group.get(), "spec", toJson(q.plan).dump(), path);
        }
        for (const auto& k : extras.kept) // unchanged, at the path its name gives (nested groups for '/')
            writeKeptDataset(file.get(), lcpl.get(), k, path);
        h5::check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), path, "flushing");
        file.reset();
        if (H5Eget_num(H5E_DEFAULT) > 0)
            throw FileError(path + ": closing the HDF5 file failed: " + h5::reason());
    }
    out.commit();
}

} // namespace ql
