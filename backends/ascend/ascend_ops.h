#pragma once
// Marshalling between a ResolvedSpec and one aclnn call: which operator, which tensors (shape, dtype,
// bytes), which attributes, and how its output turns back into ql::Codes.
#include "ascend/ascend_runtime.h"
#include "backend/timing.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ql {

enum class AscendOp : std::uint8_t { Quantize, AscendQuantV3, GroupQuant };

/// "aclnnQuantize", "aclnnAscendQuantV3", "aclnnGroupQuant".
const char* nameOf(AscendOp op);

/// A host-side tensor for an aclnn call, contiguous row-major; it either owns its bytes or views the
/// job's values. (Not runtime/ort_runtime.h's HostTensor: one name for two layouts broke the one-
/// definition rule, and the linker kept one move assignment for both.)
struct AclHostTensor {
    Shape dims;
    aclDataType dtype = acl::kFloat;
    std::vector<std::uint8_t> owned;
    const void* external = nullptr;
    std::size_t externalBytes = 0;

    const void* data() const { return external ? external : owned.data(); }
    std::size_t bytes() const { return external ? externalBytes : owned.size(); }
};

struct OpCall {
    AscendOp op = AscendOp::Quantize;
    AclHostTensor x;
    AclHostTensor scale;
    std::optional<AclHostTensor> offset;     // zeroPoints (Quantize) / offset (V3) / offsetOptional (Group)
    std::optional<AclHostTensor> groupIndex; // GroupQuant only
    AclHostTensor out;                       // shape and dtype of the output; bytes filled by the run
    std::int32_t axis = -1;
    std::int32_t dstType = acl::kInt8; // V3 / GroupQuant attribute (Quantize passes out.dtype)
    bool sqrtMode = false;
    std::string roundMode = "round";
};

/// Why the ascend backend cannot run `plan` (preset, target, shape); nullopt when it can.
/// Library and device availability are checked elsewhere.
std::optional<std::string> ascendPlanUnsupported(const ResolvedSpec& plan);

/// The call for `plan` with `params` (already checked) on `x` (viewed, not copied).
OpCall buildOpCall(const ResolvedSpec& plan, const QuantParams& params, std::span<const float> x);

/// Runs one call on `stream`: allocate, upload, create tensors, workspace, launch, synchronize,
/// download into call.out.owned. Every resource is released before it returns or throws.
/// Fills upload, kernel and download times and adds the set-up time to prepareMs.
void executeOpCall(const AclApi& api, aclrtStream stream, OpCall& call, PhaseTimes& times);

/// Unpacks the operator's output bytes (int8/uint8/int32, int4 nibbles, int4-in-int32 words).
Codes unpackCodes(const ResolvedSpec& plan, const std::vector<std::uint8_t>& out);

} // namespace ql
