#pragma once
// HDF5 files as a TensorSource: every dataset of any group tree (Keras model_weights/<layer>/...
// included), contiguous, chunked or compressed. Tensors are read on demand into owned memory.
#include "io/tensor_source.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ql {

class Hdf5Source : public TensorSource {
public:
    /// Throws FileError with the library's reason when the file is not HDF5 or cannot be read.
    static std::unique_ptr<Hdf5Source> open(const std::string& path);
    ~Hdf5Source() override;

    const std::string& path() const override { return m_path; }
    /// Datasets of supported types, in name order. Names are paths without the leading '/'.
    const std::vector<TensorInfo>& tensors() const override { return m_infos; }
    Tensor load(const std::string& name) const override;
    Tensor loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const override;

    /// Datasets left out of the inventory, with why: a type QuantLens cannot read, storage outside
    /// the file or never written.
    const std::vector<UnlistedEntry>& unlisted() const override { return m_skipped; }
    /// A string attribute of the root ("") or of a group or dataset.
    std::optional<std::string> textAttribute(const std::string& object,
                                             const std::string& key) const override;

private:
    Tensor read(const std::string& name, std::int64_t begin, std::int64_t count, bool rows) const;

    std::string m_path;
    long long m_file = -1; // hid_t, kept out of this header so users need no HDF5 include path
    std::vector<TensorInfo> m_infos;
    std::unordered_map<std::string, std::size_t> m_index;
    std::vector<UnlistedEntry> m_skipped;
};

std::unique_ptr<TensorSource> openHdf5Source(const std::string& path);

} // namespace ql
