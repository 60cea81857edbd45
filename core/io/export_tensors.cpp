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
    Tensor t(unpackedCodeDType(q.codes.target()), q.plan.shape);
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

ScaleTensors scaleTensors(const QuantizedTensor& q, const std::string& file) {
    ScaleTensors s;
    const Shape shape = exportScaleShape(q.plan);
    const Preset preset = q.plan.spec.preset;
    if (preset == Preset::MX || preset == Preset::NVFP4) {
        // spec/cli.md: mx/nvfp4 scales are exported as their codes.
        s.scale = Tensor(preset == Preset::MX ? DType::U8 : DType::F8E4M3, shape);
        std::memcpy(s.scale.mutableData(), q.params.scaleCodes.data(), q.params.scaleCodes.size());
        s.encoding = preset == Preset::MX ? "e8m0" : "e4m3";
        if (preset == Preset::NVFP4) {
            const float g = q.params.tensorScale;
            s.globalScale = Tensor::fromFloats(Shape{1}, std::span<const float>(&g, 1));
        }
    } else {
        s.scale = Tensor::fromFloats(shape, q.params.scales);
        s.encoding = "f32";
    }
    const auto& zp = q.params.zeroPoints;
    if (zp.empty()) return s;
    const Shape zshape = zp.size() == 1 ? Shape{1} : shape;
    const std::int64_t lo = codeMin(q.plan.codeTarget), hi = codeMax(q.plan.codeTarget);
    bool integral = q.plan.codeTarget != Target::Int32 && !isFloatTarget(q.plan.codeTarget);
    for (float v : zp)
        integral = integral && std::isfinite(v) && v == std::nearbyint(v) && v >= lo && v <= hi;
    if (!integral) {
        s.zeroPoint = Tensor::fromFloats(zshape, zp); // float offsets (Ascend, pypto, npu_group_quant)
        return s;
    }
    s.zeroPoint = Tensor(lo < 0 ? DType::I8 : DType::U8, zshape);
    auto* out = reinterpret_cast<std::uint8_t*>(s.zeroPoint.mutableData());
    for (std::size_t i = 0; i < zp.size(); ++i)
        out[i] = static_cast<std::uint8_t>(static_cast<std::int32_t>(zp[i]));
    (void)file;
    return s;
}

} // namespace ql
