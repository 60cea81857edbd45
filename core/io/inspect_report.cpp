#include "io/inspect_report.h"

#include "io/onnx_source.h"

namespace ql {

nlohmann::json inspectReport(const TensorSource& source, const std::string& file) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& t : source.tensors()) {
        list.push_back({{"name", t.name},
                        {"dtype", std::string(nameOf(t.dtype))},
                        {"shape", t.shape},
                        {"bytes", t.byteSize},
                        {"location", t.location}});
        // An ONNX DequantizeLinear output: the float tensor listed, and what it is made from.
        if (const QdqWeight* q = source.qdq(t.name)) {
            const char* scheme = q->scheme == QdqWeight::Scheme::PerTensor ? "per-tensor"
                                 : q->scheme == QdqWeight::Scheme::PerAxis ? "per-axis"
                                                                           : "block";
            list.back()["qdq"] = {{"scheme", scheme},           {"axis", q->axis},
                                  {"block_size", q->blockSize}, {"codes", q->codes},
                                  {"code_type", q->codeType},   {"scale", q->scale},
                                  {"zero_point", q->zeroPoint}};
        }
    }
    nlohmann::json notListed = nlohmann::json::array();
    for (const auto& [name, reason] : source.unlisted())
        notListed.push_back({{"name", name}, {"reason", reason}});
    return {{"file", file}, {"tensors", list}, {"not_listed", notListed}};
}

} // namespace ql
