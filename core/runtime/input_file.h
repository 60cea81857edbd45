#pragma once
// Model inputs from a file, for `evaluate --inputs`: named tensors whose first axis holds the samples,
// in safetensors or NumPy .npz (np.savez: entries stored uncompressed; savez_compressed is refused).
#include "runtime/ort_runtime.h"

#include <string>
#include <vector>

namespace ql {

/// Every tensor of the file, as ONNX element types. Throws FileError naming the file (and entry) for
/// a malformed file or a type ONNX Runtime is not fed here.
std::vector<HostTensor> readInputFile(const std::string& path);

} // namespace ql
