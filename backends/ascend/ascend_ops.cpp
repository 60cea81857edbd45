#include "ascend/ascend_ops.h"

#include "ascend/ascend_guards.h"
#include "base/error.h"
#include "quant/packing.h"

#include <chrono>
#include <cstring>

namespace ql {
namespace {

std::size_t byteSize(aclDataType dtype, std::int64_t count) {
    const auto n = static_cast<std::size_t>(count);
    switch (dtype) {
    case acl::kInt8:
    case acl::kUInt8:
        return n;
    case acl::kInt4:
        return (n + 1) / 2; // two per byte, even element in the low nibble (spec §6.2)
    case acl::kInt64:
        return 8 * n;
    default:
        return 4 * n; // FLOAT, INT32
    }
}

template <typename T> AclHostTensor owning(Shape dims, aclDataType dtype, const std::vector<T>& values) {
    AclHostTensor t;
    t.dims = std::move(dims);
    t.dtype = dtype;
    t.owned.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(t.owned.data(), values.data(), t.owned.size());
    return t;
}

AclHostTensor output(Shape dims, aclDataType dtype) {
    AclHostTensor t;
    t.owned.assign(byteSize(dtype, elementCount(dims)), 0);
    t.dims = std::move(dims);
    t.dtype = dtype;
    return t;
}

const char* roundModeName(Rounding r) {
    switch (r) {
    case Rounding::Floor:
        return "floor";
    case Rounding::Ceil:
        return "ceil";
    case Rounding::Trunc:
        return "trunc";
    default:
        return "round"; // RNE, CAST_RINT (spec §3.2)
    }
}

// dstType of aclnnAscendQuantV3 / aclnnGroupQuant: 2 = INT8, 29 = INT4, 3 = INT32 holding eight
// int4 (spec §3.2); the output tensor has the same dtype code.
aclDataType int4Family(const ResolvedSpec& plan) {
    if (plan.convention.packing == Packing::Int32Words) return acl::kInt32;
    return plan.spec.target == Target::Int4 ? acl::kInt4 : acl::kInt8;
}

// y keeps x's shape except for dstType 3, whose last dim holds eight int4 per word (spec §3.2).
Shape deviceOutputShape(const ResolvedSpec& plan) {
    return plan.convention.packing == Packing::Int32Words ? plan.packedShape() : plan.shape;
}

TensorGuard makeTensor(const AclApi& api, const AclHostTensor& t, void* device, const char* what) {
    // ND, contiguous: strides in elements (not bytes), storage dims = view dims (NN sample).
    const Shape strides = rowMajorStrides(t.dims);
    const auto rank = static_cast<std::uint64_t>(t.dims.size());
    return TensorGuard(api,
                       api.createTensor(t.dims.data(), rank, t.dtype, strides.data(), 0, acl::kFormatNd,
                                        t.dims.data(), rank, device),
                       what);
}

void upload(const AclApi& api, const DeviceBuffer& dst, const AclHostTensor& src, const char* what) {
    aclCheck(api.memcpy(dst.get(), dst.size(), src.data(), src.bytes(), acl::kHostToDevice),
             std::string("aclrtMemcpy(") + what + ", host to device)");
}

} // namespace

const char* nameOf(AscendOp op) {
    switch (op) {
    case AscendOp::Quantize:
        return "aclnnQuantize";
    case AscendOp::AscendQuantV3:
        return "aclnnAscendQuantV3";
    case AscendOp::GroupQuant:
        return "aclnnGroupQuant";
    }
    return "?";
}

std::optional<std::string> ascendPlanUnsupported(const ResolvedSpec& plan) {
    const QuantSpec& spec = plan.spec;
    const std::string target(nameOf(spec.target));
    std::string op;
    switch (spec.preset) {
    case Preset::AclnnQuantize:
        op = "aclnnQuantize";
        if (spec.target != Target::Int8 && spec.target != Target::UInt8 && spec.target != Target::Int32)
            return op + " produces " + target +
                   " only on Ascend 950; this backend drives the int8, uint8 and "
                   "int32 outputs (spec §3.1)";
        break;
    case Preset::AscendQuant:
        op = "aclnnAscendQuantV3";
        if (spec.target != Target::Int8 && spec.target != Target::Int4 && spec.target != Target::Int32)
            return op + " produces " + target +
                   " only on Ascend 950; this backend drives dstType 2 (int8), "
                   "29 (int4) and 3 (int32-packed int4) (spec §3.2)";
        break;
    case Preset::NpuGroupQuant:
        op = "aclnnGroupQuant";
        break;
    default:
        return "preset " + std::string(nameOf(spec.preset)) +
               " has no CANN operator; the ascend backend runs "
               "aclnn-quantize, ascend-quant and npu-group-quant";
    }
    if (plan.shape.empty()) return op + " needs a tensor of rank 1 or more (this one is a scalar)";
    if (elementCount(plan.shape) == 0)
        return "the tensor " + toString(plan.shape) + " is empty: nothing to run on the device";
    if (spec.narrowRange)
        return op + " always saturates to the full " + target +
               " range; narrow range is not an operator option";
    return std::nullopt;
}

OpCall buildOpCall(const ResolvedSpec& plan, const QuantParams& params, std::span<const float> x) {
    OpCall call;
    const int rank = static_cast<int>(plan.shape.size());
    call.x.dims = plan.shape;
    call.x.dtype = acl::kFloat;
    call.x.external = x.data();
    call.x.externalBytes = x.size_bytes();
    const bool perTensor = plan.spec.scheme == Scheme::PerTensor;
    const bool hasOffset = !plan.spec.symmetric && !params.zeroPoints.empty();

    switch (plan.spec.preset) {
    case Preset::AclnnQuantize: {
        call.op = AscendOp::Quantize;
        // scales 1-D: size 1 (axis ignored) or x.shape[axis] (spec §3.1 CheckShapeValid).
        call.axis = perTensor ? -1 : normalizeAxis(plan.spec.axes[0], rank);
        call.scale = owning({static_cast<std::int64_t>(params.scales.size())}, acl::kFloat, params.scales);
        if (hasOffset) {
            // Integer zero points (checkParams enforces integrality); INT32 is the widest accepted.
            std::vector<std::int32_t> zp;
            for (float z : params.zeroPoints)
                zp.push_back(static_cast<std::int32_t>(z));
            call.offset = owning({static_cast<std::int64_t>(zp.size())}, acl::kInt32, zp);
        }
        const aclDataType dt = plan.spec.target == Target::UInt8   ? acl::kUInt8
                               : plan.spec.target == Target::Int32 ? acl::kInt32
                                                                   : acl::kInt8;
        call.dstType = dt; // `dtype` must equal out's dtype (spec ascend_abi note)
        call.out = output(plan.shape, dt);
        break;
    }
    case Preset::AscendQuant: {
        call.op = AscendOp::AscendQuantV3;
        // V3's axis is one of the last two dims; passed in its negative form, as the V3 doc does.
        call.axis = perTensor ? -1 : normalizeAxis(plan.spec.axes[0], rank) - rank;
        call.scale = owning({static_cast<std::int64_t>(params.scales.size())}, acl::kFloat, params.scales);
        if (hasOffset) // offset: same dtype and shape as scale (spec §3.2)
            call.offset =
                owning({static_cast<std::int64_t>(params.zeroPoints.size())}, acl::kFloat, params.zeroPoints);
        call.sqrtMode = plan.spec.sqrtMode;
        call.roundMode = roundModeName(plan.convention.rounding);
        call.dstType = int4Family(plan);
        call.out = output(deviceOutputShape(plan), call.dstType);
        break;
    }
    default: { // NpuGroupQuant
        call.op = AscendOp::GroupQuant;
        call.axis = 0;
        call.scale = owning(plan.scaleShape, acl::kFloat, params.scales); // [E, H]
        call.groupIndex =
            owning({static_cast<std::int64_t>(plan.spec.groupEnds.size())}, acl::kInt64, plan.spec.groupEnds);
        if (hasOffset) // one element, same dtype as scale (spec §3.3)
            call.offset = owning({1}, acl::kFloat, std::vector<float>{params.zeroPoints[0]});
        call.dstType = int4Family(plan);
        call.out = output(deviceOutputShape(plan), call.dstType);
        break;
    }
    }
    return call;
}

void executeOpCall(const AclApi& api, aclrtStream stream, OpCall& call, PhaseTimes& times) {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    // Declaration order is release order in reverse: workspace, tensors, then device memory.
    DeviceBuffer dx(api, call.x.bytes());
    DeviceBuffer dscale(api, call.scale.bytes());
    std::optional<DeviceBuffer> dgroup, doffset; // in the operators' argument order
    if (call.groupIndex) dgroup.emplace(api, call.groupIndex->bytes());
    if (call.offset) doffset.emplace(api, call.offset->bytes());
    DeviceBuffer dout(api, call.out.bytes());
    times.prepareMs += msSince(start);

    // aclrtMemcpy is synchronous, so the wall time around it is the transfer.
    start = Clock::now();
    upload(api, dx, call.x, "x");
    upload(api, dscale, call.scale, "scale");
    if (dgroup) upload(api, *dgroup, *call.groupIndex, "groupIndex");
    if (doffset) upload(api, *doffset, *call.offset, "offset");
    times.uploadMs = msSince(start);

    start = Clock::now();
    TensorGuard tx = makeTensor(api, call.x, dx.get(), "x");
    TensorGuard tscale = makeTensor(api, call.scale, dscale.get(), "scale");
    std::optional<TensorGuard> tgroup, toffset;
    if (dgroup) tgroup.emplace(makeTensor(api, *call.groupIndex, dgroup->get(), "groupIndex"));
    if (doffset) toffset.emplace(makeTensor(api, *call.offset, doffset->get(), "offset"));
    TensorGuard tout = makeTensor(api, call.out, dout.get(), "out");
    const aclTensor* offsetTensor = toffset ? toffset->get() : nullptr; // optional inputs are NULL

    std::uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    acl::RunOpFn launch = nullptr;
    const std::string op = nameOf(call.op);
    switch (call.op) {
    case AscendOp::Quantize:
        aclCheck(api.quantizeWorkspace(tx.get(), tscale.get(), offsetTensor, call.dstType, call.axis,
                                       tout.get(), &workspaceSize, &executor),
                 op + "GetWorkspaceSize");
        launch = api.quantize;
        break;
    case AscendOp::AscendQuantV3:
        aclCheck(api.ascendQuantV3Workspace(tx.get(), tscale.get(), offsetTensor, call.sqrtMode,
                                            call.roundMode.c_str(), call.dstType, call.axis, tout.get(),
                                            &workspaceSize, &executor),
                 op + "GetWorkspaceSize");
        launch = api.ascendQuantV3;
        break;
    case AscendOp::GroupQuant:
        aclCheck(api.groupQuantWorkspace(tx.get(), tscale.get(), tgroup->get(), offsetTensor, call.dstType,
                                         tout.get(), &workspaceSize, &executor),
                 op + "GetWorkspaceSize");
        launch = api.groupQuant;
        break;
    }
    // The executor is consumed by the launch; the documented ABI has no way to release it
    // earlier, so a failure between here and the launch leaves it to CANN.
    std::optional<DeviceBuffer> workspace;
    if (workspaceSize > 0) workspace.emplace(api, static_cast<std::size_t>(workspaceSize));
    times.prepareMs += msSince(start);

    start = Clock::now();
    aclCheck(launch(workspace ? workspace->get() : nullptr, workspaceSize, executor, stream), op);
    aclCheck(api.synchronizeStream(stream), "aclrtSynchronizeStream");
    times.kernelMs = msSince(start);

    start = Clock::now();
    aclCheck(
        api.memcpy(call.out.owned.data(), call.out.owned.size(), dout.get(), dout.size(), acl::kDeviceToHost),
        "aclrtMemcpy(out, device to host)");
    times.downloadMs = msSince(start);
}

Codes unpackCodes(const ResolvedSpec& plan, const std::vector<std::uint8_t>& out) {
    const std::int64_t n = elementCount(plan.shape);
    if (plan.convention.packing == Packing::Int32Words) {
        // Element 8j+i in bits 4i..4i+3 of word j, signed nibbles (spec §3.2).
        std::vector<std::int32_t> words(out.size() / 4);
        std::memcpy(words.data(), out.data(), words.size() * 4);
        return unpackInt32Words(words, plan.shape);
    }
    if (plan.codeTarget == Target::Int4) return unpackNibbles(out, Target::Int4, n);
    Codes codes(plan.codeTarget, n);
    if (out.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(codes.width()))
        throw QuantError("ascend: the output holds " + std::to_string(out.size()) + " bytes, expected " +
                         std::to_string(n * codes.width()));
    std::memcpy(codes.data(), out.data(), out.size());
    return codes;
}

} // namespace ql
