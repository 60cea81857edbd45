#pragma once
// Vector kernels of the cpu backend: quantize a contiguous run of elements and find a run's finite
// range. Each kernel is the reference arithmetic (core/quant/reference.cpp) written over native-width
// GCC vectors, compiled with -ffp-contract=off, and finishes its tail with ql::quantizeValue.
// One source (kernels_impl.h) is built for baseline x86-64, AVX2 and AVX-512; kernelsFor() picks
// the widest the running CPU has.
#include "quant/resolved_spec.h"
#include "tensor/dtype.h"

#include <cstdint>

namespace ql::cpu {

/// The convention of one plan, resolved once per job into what the kernels branch on.
struct QuantArgs {
    const ResolvedSpec* plan = nullptr; // for the scalar tail (ql::quantizeValue)
    float qmin = 0, qmax = 0;           // integer code range (exact in fp32 for every 8-bit and 4-bit target)
    bool zpBefore = false;              // zero point added before rounding
    bool zeroScaleMeansOne = false;
    bool zeroScaleGivesZero = false;
    bool signedCodes = false; // int8 / int4 codes are read back sign-extended
    // Floating targets: every special code comes from the oracle encoder, so the kernels cannot drift.
    int mantBits = 0, bias = 0;
    std::int32_t maxMag = 0; // magnitude code of the largest finite value
    std::uint8_t signMask = 0, nanPos = 0, nanNeg = 0, ovfPos = 0; // ovfPos: +overflow; the sign is or-ed in
};

/// Quantizes n elements that share one scale; `scale` and `zp` are the operator's own values.
using QuantConstFn = void (*)(const QuantArgs&, const void* src, std::int64_t n, float scale, float zp,
                              std::uint8_t* out);
/// Quantizes `groups` consecutive groups of `length` elements, group g with scales[g] and zps[g].
using QuantBlocksFn = void (*)(const QuantArgs&, const void* src, std::int64_t groups, std::int64_t length,
                               const float* scales, const float* zps, std::uint8_t* out);
/// Quantizes n elements with one scale each (`scales`, `zps` run alongside the elements).
using QuantPerElemFn = void (*)(const QuantArgs&, const void* src, std::int64_t n, const float* scales,
                                const float* zps, std::uint8_t* out);
/// Widens [lo, hi] by the finite values of n elements; sets *nan when one is NaN.
using RangeConstFn = void (*)(const void* src, std::int64_t n, float* lo, float* hi, bool* nan);
/// The finite absolute maximum of each of `groups` consecutive groups of `length` elements (MX and
/// NVFP4 blocks) into amax[g], negated when the group holds a NaN (calib::absMaxOfBlocks' convention).
using AbsMaxBlocksFn = void (*)(const void* src, std::int64_t groups, std::int64_t length, float* amax);
/// NVFP4's block scales from the blocks' signed maxima (absMaxBlocks) and a tensor scale > 0, as
/// RangeRule::applyBlocks gives them: codes[k] = E4M3(|amax[k]| / 6 / tensorScale), saturating, and
/// scales[k] = that code's value * tensorScale. `e4m3` is miniFloatArgs(E4M3FN, Saturate); `amax`
/// may be `scales` (turned into scales in place).
using Nvfp4ScalesFn = void (*)(const QuantArgs& e4m3, const float* amax, std::int64_t n, float tensorScale,
                               std::uint8_t* codes, float* scales);
/// Element-wise: lo[i], hi[i] widened by element i; nan[i] set when it is NaN.
using RangePerElemFn = void (*)(const void* src, std::int64_t n, float* lo, float* hi, std::uint8_t* nan);
struct KernelSet {
    QuantConstFn quantConst = nullptr;   // null: no vector path for this plan/dtype (use the scalar one)
    QuantBlocksFn quantBlocks = nullptr; // set with quantConst
    QuantPerElemFn quantPerElem = nullptr;
    RangeConstFn rangeConst = nullptr;
    AbsMaxBlocksFn absMaxBlocks = nullptr; // set with rangeConst
    Nvfp4ScalesFn nvfp4Scales = nullptr;   // set with rangeConst
    RangePerElemFn rangePerElem = nullptr;
    const char* isa = "";
};

/// Input dtypes the kernels read directly (F32, BF16, F16); others are converted first.
bool kernelReads(DType dtype);
/// The arguments that encode to mini-float format `f` with overflow rule `o`.
QuantArgs miniFloatArgs(MiniFloat f, Overflow o);
/// Resolves the plan's convention into kernel arguments.
QuantArgs resolveArgs(const ResolvedSpec& plan);
/// The kernels for this plan and input dtype on the running CPU.
KernelSet kernelsFor(const ResolvedSpec& plan, DType dtype);
/// The ISA the dispatcher picked ("avx512", "avx2", "sse2", "generic").
const char* kernelIsa();

} // namespace ql::cpu
