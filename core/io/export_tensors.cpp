#include "io/export_tensors.h"

#include "base/error.h"

#include <cmath>
#include <cstring>

namespace ql {
namespace {

DType unpackedCodeDType(Target t) {
    switch (t) {
    case Target::Int8:
    case Target::Int4:
        return DType::I8;
    case Target::UInt8:
    case Target::UInt4:
    case Target::Fp4E2M1:
        return DType::U8;
    case Target::Int32:
        return DType::I32;
    case Target::Fp8E4M3:
        return DType::F8E4M3;
    case Target::Fp8E5M2:
        return DType::F8E5M2;
    }
    return DType::U8;
}

[[noreturn]] void fail(const std::string& file, const QuantizedTensor& q, const std::string& reason) {
    throw FileError(file + ": tensor '" + q.name + "': " + reason);
}

} // namespace

Shape exportScaleShape(const ResolvedSpec& plan) {
    if (plan.spec.scheme == Scheme::PerTensor || plan.scaleShape.empty()) return Shape{1};
    return plan.scaleShape;
}

void checkQuantizedTensor(const QuantizedTensor& q, const std::string& file) {
    if (q.name.empty()) throw FileError(file + ": a quantized tensor has no name");
    if (q.codes.size() != elementCount(q.plan.shape))
        fail(file, q, std::to_string(q.codes.size()) + " codes for shape " + toString(q.plan.shape));
    const auto groups = static_cast<std::size_t>(elementCount(exportScaleShape(q.plan)));
    const bool coded = q.plan.spec.preset == Preset::MX || q.plan.spec.preset == Preset::NVFP4;
    const std::size_t have = coded ? q.params.scaleCodes.size() : q.params.scales.size();
    if (have != groups)
        fail(file, q, std::to_string(have) + " scales for scale shape " + toString(exportScaleShape(q.plan)));
    if (!q.params.zeroPoints.empty() && q.params.zeroPoints.size() != 1 &&
        q.params.zeroPoints.size() != groups)
        fail(file, q,
             std::to_string(q.params.zeroPoints.size()) + " zero points for " + std::to_string(groups) +
                 " scales");
}

Tensor codesTensor(const QuantizedTensor& q) {
    // One code per element, in the tensor's own shape (a view's codes are the same bytes).
    Tensor t(unpackedCodeDType(q.codes.target()), q.plan.ownShape());
    if (t.byteSize() > 0) std::memcpy(t.mutableData(), q.codes.data(), t.byteSize());
    return t;
}

Tensor packFp4Rows(const Codes& codes, const Shape& shape) {
    const std::int64_t cols = shape.empty() ? 1 : shape.back();
    const std::int64_t rows = cols == 0 ? 0 : codes.size() / cols;
    Shape packed = shape.empty() ? Shape{1} : shape;
    packed.back() = (cols + 1) / 2;
    Tensor t(DType::U8, packed);
    auto* out = reinterpret_cast<std::uint8_t*>(t.mutableData());
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
            const std::uint8_t v = codes.data()[r * cols + c] & 0x0f;
            out[r * packed.back() + c / 2] |= static_cast<std::uint8_t>(c % 2 ? v << 4 : v);
        }
    return t;
}

ParamStorage paramStorage(const ResolvedSpec& plan, std::span<const float> zeroPoints) {
    ParamStorage s;
    s.scaleCount = elementCount(exportScaleShape(plan));
    const Preset preset = plan.spec.preset;
    // MX and NVFP4 scales are exported as their codes.
    if (preset == Preset::MX) s.scale = DType::U8;
    if (preset == Preset::NVFP4) {
        s.scale = DType::F8E4M3;
        s.globalScale = true;
    }
    if (zeroPoints.empty()) return s;
    s.zeroPointCount = zeroPoints.size() == 1 ? 1 : s.scaleCount;
    const std::int64_t lo = codeMin(plan.codeTarget), hi = codeMax(plan.codeTarget);
    bool integral = plan.codeTarget != Target::Int32 && !isFloatTarget(plan.codeTarget);
    for (float v : zeroPoints)
        integral = integral && std::isfinite(v) && v == std::nearbyint(v) && v >= lo && v <= hi;
    s.zeroPoint = !integral ? DType::F32 : lo < 0 ? DType::I8 : DType::U8;
    return s;
}

std::int64_t quantizedBits(const ResolvedSpec& plan, std::span<const float> zeroPoints) {
    const ParamStorage s = paramStorage(plan, zeroPoints);
    std::int64_t bits = elementCount(plan.shape) * bitsOf(codeDType(plan.codeTarget));
    bits += s.scaleCount * bitsOf(s.scale);
    if (s.globalScale) bits += bitsOf(DType::F32);
    if (s.zeroPoint) bits += s.zeroPointCount * bitsOf(*s.zeroPoint);
    return bits;
}

ScaleTensors scaleTensors(const QuantizedTensor& q, const std::string& file) {
    ScaleTensors s;
    const Shape shape = exportScaleShape(q.plan);
    const auto& zp = q.params.zeroPoints;
    const ParamStorage storage = paramStorage(q.plan, zp);
    if (storage.scale != DType::F32) {
        s.scale = Tensor(storage.scale, shape);
        std::memcpy(s.scale.mutableData(), q.params.scaleCodes.data(), q.params.scaleCodes.size());
        s.encoding = storage.scale == DType::U8 ? "e8m0" : "e4m3";
        if (storage.globalScale) {
            const float g = q.params.tensorScale;
            s.globalScale = Tensor::fromFloats(Shape{1}, std::span<const float>(&g, 1));
        }
    } else {
        s.scale = Tensor::fromFloats(shape, q.params.scales);
        s.encoding = "f32";
    }
    if (!storage.zeroPoint) return s;
    const Shape zshape = zp.size() == 1 ? Shape{1} : shape;
    if (*storage.zeroPoint == DType::F32) {
        s.zeroPoint = Tensor::fromFloats(zshape, zp); // float offsets (Ascend, pypto, npu_group_quant)
        return s;
    }
    s.zeroPoint = Tensor(*storage.zeroPoint, zshape);
    auto* out = reinterpret_cast<std::uint8_t*>(s.zeroPoint.mutableData());
    for (std::size_t i = 0; i < zp.size(); ++i)
        out[i] = static_cast<std::uint8_t>(static_cast<std::int32_t>(zp[i]));
    (void)file;
    return s;
}

} // namespace ql
