// Picks the kernel build for the running CPU, and resolves a plan's convention for the kernels.
#include "base/cpu_isa.h"
#include "cpu/kernels.h"
#include "tensor/float_formats.h"

#include <cmath>
#include <limits>

namespace ql::cpu {

KernelSet pick_sse2(const ResolvedSpec& plan, DType dtype);
#if QL_CPU_MULTI_ISA
KernelSet pick_avx2(const ResolvedSpec& plan, DType dtype);
KernelSet pick_avx512(const ResolvedSpec& plan, DType dtype);
#endif

namespace {

using PickFn = KernelSet (*)(const ResolvedSpec&, DType);

struct Choice {
    PickFn pick;
    const char* isa;
};

Choice choose() {
#if QL_CPU_MULTI_ISA
    switch (widestCpuIsa()) {
    case CpuIsa::Avx512:
        return {&pick_avx512, "avx512"};
    case CpuIsa::Avx2:
        return {&pick_avx2, "avx2"};
    case CpuIsa::Baseline:
        break;
    }
    return {&pick_sse2, "sse2"};
#else
    return {&pick_sse2, "generic"};
#endif
}

const Choice& choice() {
    static const Choice c = choose();
    return c;
}

} // namespace

bool kernelReads(DType dtype) {
    return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16;
}

QuantArgs miniFloatArgs(MiniFloat f, Overflow o) {
    QuantArgs a;
    a.mantBits = f == MiniFloat::E4M3FN ? 3 : (f == MiniFloat::E5M2 ? 2 : 1);
    a.bias = f == MiniFloat::E4M3FN ? 7 : (f == MiniFloat::E5M2 ? 15 : 1);
    a.signMask = f == MiniFloat::E2M1 ? 0x08 : 0x80;
    a.maxMag = encodeMiniFloat(maxFinite(f), f, o);
    // The special codes are the oracle's own answers.
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    a.nanPos = encodeMiniFloat(nan, f, o);
    a.nanNeg = encodeMiniFloat(-nan, f, o);
    a.ovfPos = encodeMiniFloat(inf, f, o);
    return a;
}

QuantArgs resolveArgs(const ResolvedSpec& plan) {
    const Convention& c = plan.convention;
    QuantArgs a;
    if (isFloatTarget(plan.codeTarget)) {
        a = miniFloatArgs(miniFloatOf(plan.codeTarget), c.overflow);
    } else {
        a.qmin = static_cast<float>(plan.qmin());
        a.qmax = static_cast<float>(plan.qmax());
    }
    a.plan = &plan;
    a.zpBefore = c.zeroPoint == ZeroPointStage::BeforeRounding;
    a.zeroScaleMeansOne = c.zeroScaleMeansOne;
    a.zeroScaleGivesZero = c.zeroScaleGivesZero;
    a.signedCodes = plan.codeTarget == Target::Int8 || plan.codeTarget == Target::Int4;
    return a;
}

KernelSet kernelsFor(const ResolvedSpec& plan, DType dtype) {
    KernelSet k = choice().pick(plan, dtype);
    k.isa = choice().isa;
    return k;
}

const char* kernelIsa() {
    return choice().isa;
}

} // namespace ql::cpu
