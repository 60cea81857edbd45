// An ONNX QDQ weight's stored codes: x, scale and zero point of its DequantizeLinear.
#include "io/onnx_source.h"
#include "io/stored_quantization.h"

#include <algorithm>

namespace ql {

std::optional<StoredQuantization> OnnxSource::storedCodes(const std::string& name, std::string* why) const {
    const QdqWeight* w = qdq(name);
    if (!w) return TensorSource::storedCodes(name, why);
    const std::string& t = w->codeType;
    StoredQuantization q;
    if (t == "int8" || t == "uint8" || t == "int4" || t == "uint4" || t == "int16" || t == "uint16") {
        q.isSigned = t[0] == 'i';
        q.bits = std::stoi(t.substr(q.isSigned ? 3 : 4));
    } else {
        if (why) *why = "codes not compared: onnx " + t + " codes are not integers";
        return TensorSource::storedCodes(name, why); // as the file's other tensors
    }
    q.format = "onnx " + t + " " + w->schemeText();
    q.shape = find(name)->shape;
    const std::size_t rank = q.shape.size();
    switch (w->scheme) {
    case QdqWeight::Scheme::PerTensor:
        q.layout.dims.assign(rank, DimMapping::shared());
        break;
    case QdqWeight::Scheme::PerAxis:
        q.layout.dims.assign(rank, DimMapping::shared());
        q.layout.dims[static_cast<std::size_t>(w->axis)] = DimMapping::full();
        break;
    case QdqWeight::Scheme::Blocked:
        q.layout.dims.assign(rank, DimMapping::full());
        q.layout.dims[static_cast<std::size_t>(w->axis)] = DimMapping::blocked(w->blockSize);
        break;
    }
    q.codes = storedIntegers(qdqCodes(name));
    q.scales = qdqScales(name).toFloatVector();
    if (const auto zp = qdqZeroPoints(name)) q.zeroPoints = storedIntegers(*zp);
    if (std::all_of(q.zeroPoints.begin(), q.zeroPoints.end(), [](std::int32_t z) { return z == 0; }))
        q.zeroPoints.clear();
    return q;
}

} // namespace ql
