#include "io/onnx_qdq.h"

#include "base/error.h"
#include "io/onnx_tensor.h"
#include "io/printable.h"

#include <cstring>

namespace ql::onnxio {
namespace {

[[noreturn]] void fail(const std::string& model, const std::string& name, const std::string& reason) {
    throw FileError(model + ": " + printable(name + ": " + reason)); // names and locations from the file
}

std::int64_t intAttribute(const onnx::NodeProto& node, const char* name, std::int64_t fallback) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return a.i();
    return fallback;
}

bool isIntegerCode(DType t) {
    return t == DType::I8 || t == DType::U8 || t == DType::I16 || t == DType::I32;
}

// Element i of an integer tensor, exactly.
std::int64_t intAt(const Tensor& t, std::int64_t i) {
    const std::byte* p = t.data() + i * storageBytes(t.dtype());
    switch (t.dtype()) {
    case DType::I8:
        return static_cast<std::int8_t>(std::to_integer<std::uint8_t>(*p));
    case DType::U8:
        return std::to_integer<std::uint8_t>(*p);
    case DType::I16: {
        std::int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    default: {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    }
}

} // namespace

QdqWeight describeQdq(const onnx::NodeProto& node, const std::string& output, const OnnxEntry& x,
                      const OnnxEntry& scale, const OnnxEntry* zeroPoint, const std::string& model) {
    QdqWeight q;
    q.output = output;
    q.codes = x.info.name;
    q.scale = scale.info.name;
    if (zeroPoint) q.zeroPoint = zeroPoint->info.name;
    const auto xType = elementType(x.dataType);
    q.codeType = xType ? xType->name : "?";
    const bool floatCodes =
        x.info.dtype == DType::F8E4M3 || x.info.dtype == DType::F8E5M2 || x.info.dtype == DType::F4E2M1;
    if (!isIntegerCode(x.info.dtype) && !floatCodes)
        fail(model, output,
             "DequantizeLinear input " + q.codes + " is " + q.codeType + ", not a quantized type");
    if (scale.info.dtype != DType::F32 && scale.info.dtype != DType::F16 && scale.info.dtype != DType::BF16)
        fail(model, output,
             "DequantizeLinear scale " + q.scale + " is " + std::string(nameOf(scale.info.dtype)) +
                 ", not f32, f16 or bf16");
    if (zeroPoint) {
        if (zeroPoint->dataType != x.dataType)
            fail(model, output, "zero point " + q.zeroPoint + " and input " + q.codes + " differ in type");
        if (zeroPoint->info.shape != scale.info.shape)
            fail(model, output,
                 "zero point shape " + toString(zeroPoint->info.shape) + " differs from scale shape " +
                     toString(scale.info.shape));
    }

    const Shape& xs = x.info.shape;
    const Shape& ss = scale.info.shape;
    const int rank = static_cast<int>(xs.size());
    std::int64_t axis = intAttribute(node, "axis", 1);
    q.blockSize = intAttribute(node, "block_size", 0);
    if (q.blockSize < 0) fail(model, output, "block_size " + std::to_string(q.blockSize) + " is negative");
    const auto needAxis = [&] {
        if (axis < -rank || axis >= rank)
            fail(model, output,
                 "axis " + std::to_string(axis) + " is out of range for input shape " + toString(xs));
        q.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
    };
    const std::string shapes = " (input " + toString(xs) + ", scale " + toString(ss) + ")";
    if (q.blockSize == 0 && ss.size() <= 1 && elementCount(ss) == 1) {
        q.scheme = QdqWeight::Scheme::PerTensor; // a scalar, or a 1-element 1-D scale
    } else if (q.blockSize == 0) {
        needAxis();
        if (ss.size() != 1 || ss[0] != xs[static_cast<std::size_t>(q.axis)])
            fail(model, output,
                 "a per-axis scale must be 1-D with one entry per index of axis " + std::to_string(q.axis) +
                     shapes);
        q.scheme = QdqWeight::Scheme::PerAxis;
    } else {
        needAxis();
        bool fits = ss.size() == xs.size();
        for (std::size_t d = 0; fits && d < xs.size(); ++d) {
            const std::int64_t want = static_cast<int>(d) == q.axis ? ceilDiv(xs[d], q.blockSize) : xs[d];
            fits = ss[d] == want;
        }
        if (!fits)
            fail(model, output,
                 "a blocked scale must have the input's shape with axis " + std::to_string(q.axis) +
                     " divided by block_size " + std::to_string(q.blockSize) + ", rounded up" + shapes);
        q.scheme = QdqWeight::Scheme::Blocked;
    }
    return q;
}

void dequantizeRange(const QdqWeight& q, const Shape& shape, const Tensor& codes,
                     const std::vector<float>& scales, const Tensor* zeroPoints, std::int64_t first,
                     std::int64_t count, float* out) {
    std::int64_t inner = 1, dimA = 1, blocks = 1;
    if (q.scheme != QdqWeight::Scheme::PerTensor) {
        for (std::size_t d = static_cast<std::size_t>(q.axis) + 1; d < shape.size(); ++d)
            inner *= shape[d];
        dimA = shape[static_cast<std::size_t>(q.axis)];
        if (q.blockSize > 0) blocks = ceilDiv(dimA, q.blockSize);
    }
    const auto scaleIndex = [&](std::int64_t i) -> std::int64_t {
        switch (q.scheme) {
        case QdqWeight::Scheme::PerTensor:
            return 0;
        case QdqWeight::Scheme::PerAxis:
            return (i / inner) % dimA;
        case QdqWeight::Scheme::Blocked: {
            const std::int64_t outer = i / (inner * dimA), along = (i / inner) % dimA, within = i % inner;
            return (outer * blocks + along / q.blockSize) * inner + within;
        }
        }
        return 0;
    };
    const bool hasZero = zeroPoints != nullptr;
    if (isIntegerCode(codes.dtype())) {
        for (std::int64_t j = 0; j < count; ++j) {
            const std::int64_t k = scaleIndex(first + j);
            const std::int64_t diff = intAt(codes, j) - (hasZero ? intAt(*zeroPoints, k) : 0);
            out[j] = static_cast<float>(diff) * scales[static_cast<std::size_t>(k)];
        }
        return;
    }
    // fp8 / fp4 codes: decoded exactly to f32; ONNX requires their zero point to be 0.
    codes.toFloat(0, count, out);
    const std::vector<float> zero = hasZero ? zeroPoints->toFloatVector() : std::vector<float>{};
    for (std::int64_t j = 0; j < count; ++j) {
        const std::int64_t k = scaleIndex(first + j);
        out[j] = (out[j] - (hasZero ? zero[static_cast<std::size_t>(k)] : 0.0f)) *
                 scales[static_cast<std::size_t>(k)];
    }
}

} // namespace ql::onnxio
