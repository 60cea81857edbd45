#include "job/export_outcome.h"

#include "base/error.h"
#include "io/export_compressed_tensors.h"
#include "io/export_onnx_qdq.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

namespace ql {

bool isHdf5Export(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".h5" || ext == ".hdf5";
}

std::function<std::string(const QuantizedTensor&)> unstorableFor(const ExportTarget& target) {
    if (isOnnxExport(target.path)) return onnxQdqRefusals(target.model);
    if (isHdf5Export(target.path) || target.layout != ExportLayout::CompressedTensors) return {};
    return [path = target.path](const QuantizedTensor& q) { return compressedTensorsRefusal(q, path); };
}

ModelJobOptions exportJobOptions(const ExportTarget& target, bool passThrough) {
    ModelJobOptions options;
    options.keepCodes = true;
    options.passThrough = passThrough;
    options.unstorable = unstorableFor(target);
    return options;
}

void exportOutcome(const ModelOutcome& outcome, const ExportTarget& target) {
    if (outcome.quantized.empty() && (!target.part || outcome.kept.empty()))
        throw FileError(target.path + ": not written: no tensor was quantized");
    if (isOnnxExport(target.path)) {
        exportOnnxQdq(target.path, outcome.quantized, target.model);
        return;
    }
    const ExportExtras extras = exportExtras(outcome);
    if (isHdf5Export(target.path)) {
        exportHdf5(target.path, outcome.quantized, target.model, extras);
        return;
    }
    std::optional<CompressedTensorsConfig> config;
    if (target.layout == ExportLayout::CompressedTensors && !target.part)
        config = compressedTensorsConfig(target.path, outcome.quantized, extras, target.model);
    exportSafetensors(target.path, outcome.quantized, target.layout, target.model, extras);
    if (config) writeCompressedTensorsConfig(*config);
}

} // namespace ql
