// Each preset's operator: its convention and the constraints it enforces, as its source has them.
#include "base/error.h"
#include "quant/resolved_spec.h"

#include <algorithm>
#include <set>
#include <string>

namespace ql {
namespace {

[[noreturn]] void reject(const QuantSpec& spec, const std::string& why) {
    throw QuantError(std::string(nameOf(spec.preset)) + ": " + why);
}

std::string targetList(std::initializer_list<Target> ts) {
    std::string s;
    for (auto t : ts)
        s += (s.empty() ? "" : ", ") + std::string(nameOf(t));
    return s;
}

void requireTarget(const QuantSpec& spec, std::initializer_list<Target> allowed, const std::string& op) {
    if (std::find(allowed.begin(), allowed.end(), spec.target) == allowed.end())
        reject(spec, op + " does not produce " + std::string(nameOf(spec.target)) + " (it supports " +
                         targetList(allowed) + ")");
}

void requireScheme(const QuantSpec& spec, std::initializer_list<Scheme> allowed, const std::string& op) {
    if (std::find(allowed.begin(), allowed.end(), spec.scheme) == allowed.end()) {
        std::string s;
        for (auto a : allowed)
            s += (s.empty() ? "" : ", ") + std::string(nameOf(a));
        reject(spec, op + " has no " + std::string(nameOf(spec.scheme)) + " scheme (it supports " + s + ")");
    }
}

void requireFixedRounding(const QuantSpec& spec) {
    if (spec.rounding && *spec.rounding != Rounding::HalfToEven)
        reject(spec,
               "the operator always rounds half to even; --round applies to ascend-quant and custom only");
}

std::vector<int> normalizedAxes(const QuantSpec& spec, int rank) {
    std::vector<int> axes;
    for (int a : spec.axes)
        axes.push_back(normalizeAxis(a, rank));
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        throw QuantError("the same axis is named twice in --axis");
    return axes;
}

int singleAxis(const QuantSpec& spec, int rank, const std::string& op) {
    if (spec.axes.size() != 1) reject(spec, op + " takes exactly one channel axis");
    return normalizeAxis(spec.axes[0], rank);
}

// The block axis of MX / NVFP4 / per-group: the named axis, or the last one when none is named.
int blockAxis(const QuantSpec& spec, int rank) {
    if (rank == 0) throw QuantError("a 0-d tensor has no axis to group along: use per-tensor");
    return spec.axes.empty() ? rank - 1 : normalizeAxis(spec.axes[0], rank);
}

Layout genericLayout(const QuantSpec& spec, const Shape& shape) {
    const int rank = static_cast<int>(shape.size());
    Layout l{std::vector<DimMapping>(rank, DimMapping::shared())};
    switch (spec.scheme) {
    case Scheme::PerTensor:
        break;
    case Scheme::PerChannel:
        for (int a : normalizedAxes(spec, rank))
            l.dims[a] = DimMapping::full();
        break;
    case Scheme::PerGroup: {
        if (spec.groupSize <= 0) throw QuantError("group size must be positive");
        std::fill(l.dims.begin(), l.dims.end(), DimMapping::full());
        l.dims[blockAxis(spec, rank)] = DimMapping::blocked(spec.groupSize);
        break;
    }
    case Scheme::Block: {
        for (std::int64_t b : spec.block)
            if (b <= 0) throw QuantError("block sizes must be positive, got " + std::to_string(b));
        std::fill(l.dims.begin(), l.dims.end(), DimMapping::full());
        if (spec.block.size() == 1) {
            l.dims[blockAxis(spec, rank)] = DimMapping::blocked(spec.block[0]);
        } else if (static_cast<int>(spec.block.size()) == rank) {
            for (int d = 0; d < rank; ++d)
                if (spec.block[d] != 1) l.dims[d] = DimMapping::blocked(spec.block[d]);
        } else {
            std::string sizes;
            for (std::int64_t b : spec.block)
                sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
            throw QuantError("blocks of " + sizes + " name " + std::to_string(spec.block.size()) +
                             " dimensions and this tensor has " + std::to_string(rank) + " " +
                             toString(shape) + ": give one size per dimension, or one size along --axis");
        }
        break;
    }
    case Scheme::Ragged: {
        if (rank < 1) throw QuantError("ragged groups need a tensor of rank 1 or more");
        std::fill(l.dims.begin(), l.dims.end(), DimMapping::full());
        const int axis = spec.axes.empty() ? 0 : normalizeAxis(spec.axes[0], rank);
        l.dims[axis] = DimMapping::ragged(spec.groupEnds);
        break;
    }
    }
    return l;
}

void requireDividingBlocks(const QuantSpec& spec, const Layout& l, const Shape& shape,
                           const std::string& op) {
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (l.dims[d].kind == DimMapping::Kind::Block && shape[d] % l.dims[d].block != 0)
            reject(spec, op + " needs block sizes that divide the dimension: axis " + std::to_string(d) +
                             " has " + std::to_string(shape[d]) + " elements, block " +
                             std::to_string(l.dims[d].block) + " (no short last block)");
}

void checkTorch(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    requireTarget(spec, {Target::Int8, Target::UInt8, Target::Int32, Target::UInt4},
                  "torch.quantize_per_tensor/per_channel");
    requireScheme(spec, {Scheme::PerTensor, Scheme::PerChannel}, "torch.quantize_per_tensor/per_channel");
    if (spec.scheme == Scheme::PerChannel)
        singleAxis(spec, static_cast<int>(shape.size()), "quantize_per_channel");
    requireFixedRounding(spec);
    plan.notes = "torch rounds the scale to fp32 and multiplies by its reciprocal (not a division); the zero "
                 "point is added after rounding, in fp32.";
    if (spec.target == Target::UInt4 && spec.scheme == Scheme::PerChannel)
        plan.notes += " quint4x2 per-channel takes float zero points added before rounding.";
}

void checkTensorRT(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    requireTarget(spec, {Target::Int8, Target::Int4, Target::Fp8E4M3, Target::Fp4E2M1}, "IQuantizeLayer");
    requireScheme(spec, {Scheme::PerTensor, Scheme::PerChannel, Scheme::Block}, "IQuantizeLayer");
    if (!spec.symmetric) reject(spec, "TensorRT supports only symmetric quantization (zero point must be 0)");
    requireFixedRounding(spec);
    const int rank = static_cast<int>(shape.size());
    if (spec.scheme == Scheme::PerChannel) singleAxis(spec, rank, "per-channel IQuantizeLayer");
    if (spec.scheme == Scheme::Block) {
        requireDividingBlocks(spec, plan.layout, shape, "block quantization");
        for (int d = 0; d < rank - 2; ++d)
            if (plan.layout.dims[d].kind == DimMapping::Kind::Block)
                reject(spec, "block quantization blocks only the last or second-to-last dimension");
    }
    plan.notes = "TensorRT divides by the scale and rounds half to even.";
    if (spec.target == Target::Fp4E2M1) plan.notes += " FP4 clamps at ±6 (E2M1 range; bound not documented).";
}

void checkAclnnQuantize(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    requireTarget(spec, {Target::Int8, Target::UInt8, Target::Int32, Target::Fp8E4M3, Target::Fp8E5M2},
                  "aclnnQuantize");
    requireScheme(spec, {Scheme::PerTensor, Scheme::PerChannel}, "aclnnQuantize");
    requireFixedRounding(spec);
    if (shape.size() > 8) reject(spec, "aclnnQuantize takes tensors of rank 1 to 8");
    if (spec.scheme == Scheme::PerChannel) singleAxis(spec, static_cast<int>(shape.size()), "aclnnQuantize");
    plan.notes =
        "aclnnQuantize divides by the scale (PyTorch multiplies by the reciprocal) and adds the zero "
        "point before rounding.";
    if (isFloatTarget(spec.target)) plan.notes += " FP8 outputs exist on Ascend 950 only.";
}

void checkAscendQuant(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    requireTarget(spec, {Target::Int8, Target::Int4, Target::Int32, Target::Fp8E4M3, Target::Fp8E5M2},
                  "aclnnAscendQuantV3");
    requireScheme(spec, {Scheme::PerTensor, Scheme::PerChannel}, "aclnnAscendQuantV3");
    const int rank = static_cast<int>(shape.size());
    if (rank < 1) reject(spec, "aclnnAscendQuantV3 needs a tensor of rank 1 or more");
    if (spec.scheme == Scheme::PerChannel) {
        const int axis = singleAxis(spec, rank, "aclnnAscendQuantV3");
        if (axis < rank - 2) reject(spec, "the scale axis must be one of the last two dimensions (A2/A3)");
    }
    if (spec.rounding == Rounding::HalfAwayFromZero)
        reject(spec, "round modes are round (half-even), floor, ceil and trunc; hybrid is HiFloat8 only");
    if (isFloatTarget(spec.target) && spec.rounding && *spec.rounding != Rounding::HalfToEven)
        reject(spec, "FP8 outputs support only round mode \"round\"");
    const std::int64_t last = shape.back();
    if (spec.target == Target::Int4 && last % 2 != 0)
        reject(spec, "int4 output needs an even last dimension (it has " + std::to_string(last) + ")");
    if (spec.target == Target::Int32 && last % 8 != 0)
        reject(spec, "int32 output packs eight int4 per word: the last dimension (" + std::to_string(last) +
                         ") must be a multiple of 8");
    // y = round(x*scale + offset) (spec §3.2): the scale it takes is the inverse of PyTorch's step.
    plan.notes = "aclnnAscendQuantV3 multiplies by the scale it is given: 1/scale, the inverse of "
                 "PyTorch's scale (its scales read as 1/step beside torch's), and adds the offset before "
                 "rounding.";
    if (spec.sqrtMode)
        plan.notes += " sqrt mode follows the A2/A3 kernel, (x*s)*s; the operator's test golden computes "
                      "x*(s*s), which can differ by one code at ties.";
}

void checkNpuGroupQuant(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    requireTarget(spec, {Target::Int8, Target::Int4, Target::Int32}, "npu_group_quant");
    requireScheme(spec, {Scheme::Ragged}, "npu_group_quant");
    requireFixedRounding(spec);
    if (shape.size() != 2) reject(spec, "x must be 2-D [S, H] (it is " + toString(shape) + ")");
    if (!spec.axes.empty() && normalizeAxis(spec.axes[0], 2) != 0)
        reject(spec, "groups run over rows (axis 0)");
    if (spec.target == Target::Int32 && shape[1] % 8 != 0)
        reject(spec, "int32 (quint4x2) output needs H % 8 == 0 (H = " + std::to_string(shape[1]) + ")");
    if (spec.target == Target::Int4 && shape[1] % 2 != 0) reject(spec, "int4 output needs an even H");
    plan.scalarZeroPoint = true;
    plan.notes = "npu_group_quant multiplies by the group's scale row and adds one scalar offset before "
                 "rounding; quint4x2 output holds signed int4 nibbles.";
}

void checkPyPTO(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    if (spec.symmetric && spec.target != Target::Int8)
        reject(spec, "without zero points the output type must be int8");
    if (!spec.symmetric && spec.target != Target::UInt8)
        reject(spec, "with zero points the output type must be uint8");
    requireFixedRounding(spec);
    const int rank = static_cast<int>(shape.size());
    if (rank < 1 || rank > 5) reject(spec, "input rank must be 1 to 5");
    if (rank == 1) {
        requireScheme(spec, {Scheme::PerTensor}, "pypto.quantize on a 1-D input (one scale)");
    } else {
        requireScheme(spec, {Scheme::PerChannel}, "pypto.quantize");
        // pypto's axis names the axis that SHARES a scale; every other axis has its own.
        const auto axes = normalizedAxes(spec, rank);
        std::set<int> own(axes.begin(), axes.end());
        int sharedAxis = -1;
        for (int d = 0; d < rank; ++d)
            if (!own.count(d)) sharedAxis = sharedAxis == -1 ? d : -2;
        if (sharedAxis < rank - 2)
            reject(spec, "scales must cover every axis but one of the last two (pypto's axis=-1 is --axis " +
                             std::string(rank == 2 ? "0" : "0,...,rank-2") + " here)");
    }
    plan.notes = "pypto's axis names the axis that shares a scale (the opposite of PyTorch); its documented "
                 "uint8 example subtracts the zero point, but the implementation adds it: "
                 "QuantLens follows the implementation.";
}

void checkBlockFormat(const QuantSpec& spec, const Shape& shape, ResolvedSpec& plan) {
    const PresetInfo& format = presetInfo(spec.preset);
    const std::int64_t block = format.formatBlock;
    if (!format.targets[static_cast<std::size_t>(spec.target)]) {
        std::string list;
        for (std::size_t t = 0; t < format.targets.size(); ++t)
            if (format.targets[t])
                list += (list.empty() ? "" : ", ") + std::string(nameOf(static_cast<Target>(t)));
        reject(spec, std::string(spec.preset == Preset::MX ? "OCP MX" : "NVFP4") + " does not produce " +
                         std::string(nameOf(spec.target)) + " (it supports " + list + ")");
    }
    if (spec.calibration.method != CalibMethod::AbsMax && spec.calibration.method != CalibMethod::Mse)
        reject(spec,
               "block scales follow the format's own rule from the block's max |x| (--calib absmax), or "
               "search its neighbouring scale codes for the least error (--calib mse)");
    if (shape.empty()) reject(spec, "a block format needs a tensor of rank 1 or more");
    if (spec.scheme != Scheme::Block)
        reject(spec, std::string("scales are per block of ") + std::to_string(block) +
                         " elements along one axis by the format's definition: use the block scheme");
    if (!spec.block.empty() && spec.block != std::vector<std::int64_t>{block})
        reject(spec, std::string(spec.preset == Preset::MX ? "OCP MX" : "NVFP4") + " blocks are " +
                         std::to_string(block) + " elements by the format's definition: leave --block out");
    const int axis = blockAxis(spec, static_cast<int>(shape.size()));
    Layout l{std::vector<DimMapping>(shape.size(), DimMapping::full())};
    l.dims[axis] = DimMapping::blocked(block);
    plan.layout = l;
    if (spec.preset == Preset::NVFP4) {
        requireDividingBlocks(spec, l, shape, "NVFP4");
        plan.notes = "NVFP4: E4M3 scale per 16 elements times an fp32 tensor scale amax/(448*6); all-zero "
                     "blocks get scale code 0x00 as in TRT-LLM (ModelOpt writes 1.0).";
    } else {
        plan.notes = "OCP MX: E8M0 scale 2^(floor(log2(amax)) - emax) per 32 elements; elements rounded half "
                     "to even and saturated. A short last block is scaled over the elements it holds.";
    }
}

void checkCustom(const QuantSpec& spec, ResolvedSpec&) {
    if (spec.sqrtMode && spec.custom && spec.custom->scaleOp != ScaleOp::MultiplyTwice)
        reject(spec, "sqrt mode means scale op \"multiply twice\"");
}

} // namespace

Convention conventionOf(const QuantSpec& spec) {
    Convention c;
    switch (spec.preset) {
    case Preset::Torch:
        c.scaleOp = ScaleOp::MultiplyReciprocal;
        c.zeroPoint = ZeroPointStage::AfterRounding;
        c.nan = NanPolicy::X86IntCast;
        if (spec.target == Target::UInt4) {
            c.packing = Packing::NibblesFlat;
            if (spec.scheme == Scheme::PerChannel) { // quantize_val_float_qparams
                c.zeroPoint = ZeroPointStage::BeforeRounding;
                c.zeroScaleMeansOne = true;
            }
        }
        return c;
    case Preset::TensorRT:
    case Preset::AclnnQuantize:
        c.scaleOp = ScaleOp::Divide;
        c.zeroPoint = ZeroPointStage::BeforeRounding;
        if (isSubByte(spec.target)) c.packing = Packing::NibblesFlat;
        return c;
    case Preset::AscendQuant:
    case Preset::NpuGroupQuant:
    case Preset::PyPTO:
        c.scaleOp = spec.sqrtMode ? ScaleOp::MultiplyTwice : ScaleOp::Multiply;
        c.zeroPoint = ZeroPointStage::BeforeRounding;
        c.rounding = spec.rounding.value_or(Rounding::HalfToEven);
        if (spec.target == Target::Int32 && spec.preset != Preset::PyPTO) c.packing = Packing::Int32Words;
        if (spec.target == Target::Int4) c.packing = Packing::NibblesFlat;
        return c;
    case Preset::MX:
    case Preset::NVFP4:
        c.scaleOp = ScaleOp::Divide;
        c.zeroPoint = ZeroPointStage::BeforeRounding;
        c.zeroScaleGivesZero = spec.preset == Preset::NVFP4;
        if (spec.target == Target::Fp4E2M1) c.packing = Packing::NibblesFlat;
        return c;
    case Preset::Custom:
        c = spec.custom.value_or(Convention{});
        if (spec.rounding) c.rounding = *spec.rounding;
        if (spec.sqrtMode) c.scaleOp = ScaleOp::MultiplyTwice;
        return c;
    }
    return c;
}

ResolvedSpec resolveSpec(const QuantSpec& spec, const Shape& shape) {
    for (auto d : shape)
        if (d < 0) throw QuantError("negative dimension in shape " + toString(shape));
    if (isFloatTarget(spec.target) && !spec.symmetric)
        reject(spec, std::string(nameOf(spec.target)) + " has no zero point: use --symmetric");
    if (spec.narrowRange && (codeMin(spec.target) >= 0 || isFloatTarget(spec.target)))
        reject(spec, "narrow range applies to signed integer targets only");
    if (spec.sqrtMode && spec.preset != Preset::AscendQuant && spec.preset != Preset::Custom)
        reject(spec, "sqrt mode is an aclnnAscendQuantV3 option");

    ResolvedSpec plan;
    plan.spec = spec;
    plan.shape = shape;
    plan.convention = conventionOf(spec);
    plan.codeTarget = spec.target;
    if (!isBlockFormat(spec.preset)) plan.layout = genericLayout(spec, shape);

    switch (spec.preset) {
    case Preset::Torch:
        checkTorch(spec, shape, plan);
        break;
    case Preset::TensorRT:
        checkTensorRT(spec, shape, plan);
        break;
    case Preset::AclnnQuantize:
        checkAclnnQuantize(spec, shape, plan);
        break;
    case Preset::AscendQuant:
        checkAscendQuant(spec, shape, plan);
        break;
    case Preset::NpuGroupQuant:
        checkNpuGroupQuant(spec, shape, plan);
        break;
    case Preset::PyPTO:
        checkPyPTO(spec, shape, plan);
        break;
    case Preset::MX:
    case Preset::NVFP4:
        checkBlockFormat(spec, shape, plan);
        break;
    case Preset::Custom:
        checkCustom(spec, plan);
        break;
    }
    // Ascend's "int32" output is int4 codes packed eight per word (dstType 3).
    if (plan.convention.packing == Packing::Int32Words) plan.codeTarget = Target::Int4;

    plan.layout.check(shape);
    plan.scaleShape = plan.layout.scaleShape(shape);
    plan.scaleCount = elementCount(plan.scaleShape);
    return plan;
}

Shape ResolvedSpec::packedShape() const {
    Shape s = shape;
    if (convention.packing == Packing::Int32Words && !s.empty()) s.back() /= 8;
    if (convention.packing == Packing::NibblesFlat) s = {(elementCount(shape) + 1) / 2};
    return s;
}

} // namespace ql
