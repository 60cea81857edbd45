// Builds without HDF5 (-DQUANTLENS_HDF5=OFF) still offer the call, with an explanation.
#include "base/error.h"
#include "io/export.h"

namespace ql {

void exportHdf5(const std::string& path, const std::vector<QuantizedTensor>&, const std::string&,
                const ExportExtras&) {
    throw FileError(path +
                    ": this build of QuantLens has no HDF5 support (configure with -DQUANTLENS_HDF5=ON)");
}

} // namespace ql
