// Built when QuantLens is configured without ONNX support (-DQUANTLENS_ONNX=OFF).
#include "base/error.h"
#include "io/export_onnx_qdq.h"

namespace ql {
namespace {

const char* const kNoOnnx =
    "this build of QuantLens has no ONNX support (configure with -DQUANTLENS_ONNX=ON, "
    "which needs libonnx-dev and libprotobuf-dev)";

} // namespace

std::function<std::string(const QuantizedTensor&)> onnxQdqRefusals(const std::string&) {
    return [](const QuantizedTensor&) { return std::string(kNoOnnx); };
}

void exportOnnxQdq(const std::string& path, const std::vector<QuantizedTensor>&, const std::string&) {
    throw FileError(path + ": " + kNoOnnx);
}

} // namespace ql
