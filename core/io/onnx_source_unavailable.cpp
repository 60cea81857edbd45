// Built when QuantLens is configured without ONNX support (-DQUANTLENS_ONNX=OFF).
#include "base/error.h"
#include "io/onnx_source.h"

namespace ql {

std::unique_ptr<TensorSource> openOnnxSource(const std::string& path) {
    throw FileError(path +
                    ": this build of QuantLens has no ONNX support (configure with -DQUANTLENS_ONNX=ON, "
                    "which needs libonnx-dev and libprotobuf-dev)");
}

} // namespace ql
