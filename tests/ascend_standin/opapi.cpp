// Stand-in libopapi.so: aclnnQuantize and aclnnAscendQuantV3 (aclnnGroupQuant: group_quant.cpp) computed on
// the CPU with aclnnQuantize's arithmetic as CANN documents it, written apart from core/quant. The first
// phase checks the arguments and builds an executor; the second queues it on the stream; the work runs at
// aclrtSynchronizeStream.
#include "standin_ops.h"

using namespace qlstandin;

// ---- aclnnQuantize: out = round(x / scales + zeroPoints) (spec §3.1) ----

QL_STANDIN_EXPORT int aclnnQuantizeGetWorkspaceSize(const aclTensor* x, const aclTensor* scales,
                                                    const aclTensor* zeroPoints, int dtype, std::int32_t axis,
                                                    aclTensor* out, std::uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
    const std::string op = "aclnnQuantize";
    if (int e = enter(op + "GetWorkspaceSize", "dtype=" + std::to_string(dtype) + " axis=" +
                                                   std::to_string(axis) + " zeroPoints=" + yesNo(zeroPoints)))
        return e;
    if (!valid(x) || !valid(scales) || !valid(out) || (zeroPoints && !valid(zeroPoints)) || !workspaceSize ||
        !executor)
        return refuse(ErrNnParamNull, op + ": null or invalid argument");
    const int rank = static_cast<int>(x->dims.size());
    int a = 0;
    if (!allNd({x, scales, zeroPoints, out})) return refuse(ErrNnParamInvalid, op + ": format must be ND");
    if (x->dtype != DtFloat || scales->dtype != DtFloat)
        return refuse(ErrNnParamInvalid, op + ": the stand-in computes FLOAT x and scales only");
    if (rank < 1 || rank > 8 || !normalizeAxis(axis, rank, &a))
        return refuse(ErrNnParamInvalid, op + ": rank 1-8 and axis in [-rank, rank)");
    if (scales->dims.size() != 1 || (scales->dims[0] != 1 && scales->dims[0] != x->dims[a]))
        return refuse(ErrNnParamInvalid, op + ": scales must be 1-D of size 1 or x.shape[axis]");
    if (zeroPoints &&
        (zeroPoints->dims != scales->dims ||
         (zeroPoints->dtype != DtInt32 && zeroPoints->dtype != DtInt8 && zeroPoints->dtype != DtUInt8)))
        return refuse(ErrNnParamInvalid, op + ": zeroPoints must be INT32/INT8/UINT8 shaped like scales");
    if (out->dtype != dtype || out->dims != x->dims ||
        (dtype != DtInt8 && dtype != DtUInt8 && dtype != DtInt32))
        return refuse(ErrNnParamInvalid,
                      op + ": dtype must equal out's dtype (INT8, UINT8, INT32), out shaped like x");

    const View vx(x), vs(scales), vo(out);
    const std::optional<View> vz = zeroPoints ? std::optional<View>(View(zeroPoints)) : std::nullopt;
    auto work = [=]() -> int {
        if (!live(vx) || !live(vs) || !live(vo) || (vz && !live(*vz)))
            return refuse(ErrKernel, op + ": freed memory");
        const std::int32_t lo = dtype == DtInt8    ? -128
                                : dtype == DtUInt8 ? 0
                                                   : std::numeric_limits<std::int32_t>::min();
        const std::int32_t hi = dtype == DtInt8    ? 127
                                : dtype == DtUInt8 ? 255
                                                   : std::numeric_limits<std::int32_t>::max();
        forEachIndex(vx.dims, [&](const std::vector<std::int64_t>& idx) {
            const std::vector<std::int64_t> c{vs.dims[0] == 1 ? 0 : idx[a]};
            float t = vx.readFloat(vx.element(idx)) / vs.readFloat(vs.element(c)); // true division
            if (vz) t = t + static_cast<float>(vz->readInt(vz->element(c)));       // zp before rounding
            vo.writeCode(vo.element(idx), saturate(castToInt32(t, "round"), lo, hi));
        });
        return 0;
    };
    return finishFirstPhase(op, work, workspaceSize, executor);
}

QL_STANDIN_EXPORT int aclnnQuantize(void* workspace, std::uint64_t size, aclOpExecutor* ex, void* stream) {
    return launch("aclnnQuantize", workspace, size, ex, stream);
}

// The element of a scale (1-D, or x's rank with 1 in every non-axis dim) for axis index `i`.
static std::int64_t scaleElement(const View& v, std::int64_t i, int axis) {
    std::vector<std::int64_t> idx(v.dims.size(), 0);
    idx[v.dims.size() == 1 ? 0 : static_cast<std::size_t>(axis)] = i;
    return v.element(idx);
}

// ---- aclnnAscendQuantV3: y = round(x * scale [* scale] + offset) (spec §3.2, A2/A3 order) ----

QL_STANDIN_EXPORT int aclnnAscendQuantV3GetWorkspaceSize(const aclTensor* x, const aclTensor* scale,
                                                         const aclTensor* offset, bool sqrtMode,
                                                         const char* roundMode, std::int32_t dstType,
                                                         std::int32_t axis, const aclTensor* y,
                                                         std::uint64_t* workspaceSize,
                                                         aclOpExecutor** executor) {
    const std::string op = "aclnnAscendQuantV3";
    const std::string mode = roundMode ? roundMode : "";
    if (int e = enter(op + "GetWorkspaceSize", "sqrtMode=" + std::to_string(sqrtMode) + " roundMode=" + mode +
                                                   " dstType=" + std::to_string(dstType) + " axis=" +
                                                   std::to_string(axis) + " offset=" + yesNo(offset)))
        return e;
    if (!valid(x) || !valid(scale) || !valid(y) || (offset && !valid(offset)) || !workspaceSize || !executor)
        return refuse(ErrNnParamNull, op + ": null or invalid argument");
    const int rank = static_cast<int>(x->dims.size());
    int a = 0;
    if (!allNd({x, scale, offset, y})) return refuse(ErrNnParamInvalid, op + ": format must be ND");
    if (x->dtype != DtFloat || scale->dtype != DtFloat || (offset && offset->dtype != DtFloat))
        return refuse(ErrNnParamInvalid, op + ": the stand-in computes FLOAT x, scale and offset only");
    if (rank < 1 || !normalizeAxis(axis, rank, &a) || a < rank - 2)
        return refuse(ErrNnParamInvalid, op + ": axis must be one of the last two dims");
    const std::int64_t n = count(scale->dims);
    if (n != 1 && n != x->dims[a])
        return refuse(ErrNnParamInvalid, op + ": scale size must be 1 or x.shape[axis]");
    if (scale->dims.size() != 1 && scale->dims.size() != static_cast<std::size_t>(rank))
        return refuse(ErrNnParamInvalid, op + ": scale must be 1-D or of x's rank");
    for (std::size_t d = 0; d < scale->dims.size() && scale->dims.size() > 1; ++d)
        if (static_cast<int>(d) != a && scale->dims[d] != 1)
            return refuse(ErrNnParamInvalid, op + ": a multi-dim scale has 1 in every non-axis dim");
    if (offset && offset->dims != scale->dims)
        return refuse(ErrNnParamInvalid, op + ": offset must match scale");
    if (mode != "round" && mode != "floor" && mode != "ceil" && mode != "trunc")
        return refuse(ErrNnParamInvalid, op + ": roundMode " + mode);
    std::vector<std::int64_t> ydims = x->dims;
    const std::int64_t last = x->dims.back();
    if (dstType == DtInt32) {
        if (last % 8) return refuse(ErrNnParamInvalid, op + ": INT32 output needs last dim % 8 == 0");
        ydims.back() = last / 8;
    } else if (dstType == DtInt4) {
        if (last % 2) return refuse(ErrNnParamInvalid, op + ": INT4 output needs an even last dim");
    } else if (dstType != DtInt8) {
        return refuse(ErrNnParamInvalid,
                      op + ": dstType " + std::to_string(dstType) + " (stand-in: 2, 29, 3)");
    }
    if (y->dtype != dstType || y->dims != ydims)
        return refuse(ErrNnParamInvalid,
                      op + ": y must have dtype dstType and shape " + formatDims(ydims.data(), ydims.size()));

    const View vx(x), vs(scale), vy(y);
    const std::optional<View> vo = offset ? std::optional<View>(View(offset)) : std::nullopt;
    auto work = [=]() -> int {
        if (!live(vx) || !live(vs) || !live(vy) || (vo && !live(*vo)))
            return refuse(ErrKernel, op + ": freed memory");
        const std::int32_t lo = dstType == DtInt8 ? -128 : -8, hi = dstType == DtInt8 ? 127 : 7;
        forEachIndex(vx.dims, [&](const std::vector<std::int64_t>& idx) {
            const std::int64_t se = scaleElement(vs, n == 1 ? 0 : idx[a], a);
            const float s = vs.readFloat(se);
            float t = vx.readFloat(vx.element(idx)) * s;
            if (sqrtMode) t = t * s; // (x*s)*s, not x*(s*s) (spec §3.2 quirk)
            if (vo) t = t + vo->readFloat(scaleElement(*vo, n == 1 ? 0 : idx[a], a));
            const std::int32_t q = saturate(castToInt32(t, mode), lo, hi);
            if (dstType == DtInt32) {
                // Word j of the row holds elements 8j..8j+7, element 8j+i in bits 4i..4i+3.
                std::vector<std::int64_t> widx = idx;
                widx.back() = idx.back() / 8;
                const std::int64_t w = vy.element(widx);
                std::int32_t word = static_cast<std::int32_t>(vy.readInt(w));
                const int shift = static_cast<int>(idx.back() % 8) * 4;
                word = static_cast<std::int32_t>((static_cast<std::uint32_t>(word) & ~(0xFu << shift)) |
                                                 ((static_cast<std::uint32_t>(q) & 0xFu) << shift));
                vy.writeCode(w, word);
            } else {
                vy.writeCode(vy.element(idx), q);
            }
        });
        return 0;
    };
    return finishFirstPhase(op, work, workspaceSize, executor);
}

QL_STANDIN_EXPORT int aclnnAscendQuantV3(void* workspace, std::uint64_t size, aclOpExecutor* ex,
                                         void* stream) {
    return launch("aclnnAscendQuantV3", workspace, size, ex, stream);
}
