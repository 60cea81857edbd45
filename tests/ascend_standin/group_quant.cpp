// Stand-in aclnnGroupQuant: y[r] = round(x[r] * scale[g] + offset), row r in group g when
// gi[g-1] <= r < gi[g] (spec §3.3). Left out of the "partial" stand-in, which tests a missing symbol.
#include "standin_ops.h"

using namespace qlstandin;

QL_STANDIN_EXPORT int aclnnGroupQuantGetWorkspaceSize(const aclTensor* x, const aclTensor* scale,
                                                      const aclTensor* groupIndex,
                                                      const aclTensor* offsetOptional, std::int32_t dstType,
                                                      aclTensor* y, std::uint64_t* workspaceSize,
                                                      aclOpExecutor** executor) {
    const std::string op = "aclnnGroupQuant";
    if (int e = enter(op + "GetWorkspaceSize",
                      "dstType=" + std::to_string(dstType) + " offset=" + yesNo(offsetOptional)))
        return e;
    if (!valid(x) || !valid(scale) || !valid(groupIndex) || !valid(y) ||
        (offsetOptional && !valid(offsetOptional)) || !workspaceSize || !executor)
        return refuse(ErrNnParamNull, op + ": null or invalid argument");
    if (!allNd({x, scale, groupIndex, offsetOptional, y}))
        return refuse(ErrNnParamInvalid, op + ": format must be ND");
    if (x->dtype != DtFloat || scale->dtype != DtFloat ||
        (offsetOptional && offsetOptional->dtype != DtFloat))
        return refuse(ErrNnParamInvalid, op + ": the stand-in computes FLOAT x, scale and offset only");
    if (x->dims.size() != 2 || scale->dims.size() != 2 || scale->dims[1] != x->dims[1])
        return refuse(ErrNnParamInvalid, op + ": x [S,H] and scale [E,H]");
    if (groupIndex->dims.size() != 1 || groupIndex->dims[0] != scale->dims[0] ||
        (groupIndex->dtype != DtInt32 && groupIndex->dtype != DtInt64))
        return refuse(ErrNnParamInvalid, op + ": groupIndex [E], INT32 or INT64");
    if (offsetOptional && count(offsetOptional->dims) != 1)
        return refuse(ErrNnParamInvalid, op + ": offset holds one element");
    const std::int64_t h = x->dims[1];
    std::vector<std::int64_t> ydims = x->dims;
    if (dstType == DtInt32) {
        if (h % 8) return refuse(ErrNnParamInvalid, op + ": INT32 output needs H % 8 == 0");
        ydims[1] = h / 8;
    } else if (dstType == DtInt4) {
        if (h % 2) return refuse(ErrNnParamInvalid, op + ": INT4 output needs an even H");
    } else if (dstType != DtInt8) {
        return refuse(ErrNnParamInvalid, op + ": dstType " + std::to_string(dstType));
    }
    if (y->dtype != dstType || y->dims != ydims) return refuse(ErrNnParamInvalid, op + ": y dtype or shape");

    const View vx(x), vs(scale), vg(groupIndex), vy(y);
    const std::optional<View> vo = offsetOptional ? std::optional<View>(View(offsetOptional)) : std::nullopt;
    auto work = [=]() -> int {
        if (!live(vx) || !live(vs) || !live(vg) || !live(vy) || (vo && !live(*vo)))
            return refuse(ErrKernel, op + ": freed memory");
        const std::int64_t rows = vx.dims[0], groups = vg.dims[0];
        std::vector<std::int64_t> ends;
        for (std::int64_t g = 0; g < groups; ++g)
            ends.push_back(vg.readInt(vg.element({g})));
        // The kernel traps on a bad group index: non-decreasing, >= 0, last == S.
        for (std::int64_t g = 0; g < groups; ++g)
            if (ends[g] < (g ? ends[g - 1] : 0)) return refuse(ErrKernel, op + ": group index decreases");
        if (groups == 0 || ends.back() != rows) return refuse(ErrKernel, op + ": last group index != S");
        const float offset = vo ? vo->readFloat(vo->offset) : 0.0f;
        const std::int32_t lo = dstType == DtInt8 ? -128 : -8, hi = dstType == DtInt8 ? 127 : 7;
        std::int64_t g = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
            while (r >= ends[g])
                ++g; // empty groups are passed over
            for (std::int64_t c = 0; c < h; ++c) {
                float t = vx.readFloat(vx.element({r, c})) * vs.readFloat(vs.element({g, c}));
                t = t + offset;
                const std::int32_t q = saturate(castToInt32(t, "round"), lo, hi);
                if (dstType == DtInt32) {
                    const std::int64_t w = vy.element({r, c / 8});
                    const int shift = static_cast<int>(c % 8) * 4;
                    const auto old = static_cast<std::uint32_t>(vy.readInt(w));
                    vy.writeCode(
                        w, static_cast<std::int32_t>((old & ~(0xFu << shift)) |
                                                     ((static_cast<std::uint32_t>(q) & 0xFu) << shift)));
                } else {
                    vy.writeCode(vy.element({r, c}), q);
                }
            }
        }
        return 0;
    };
    return finishFirstPhase(op, work, workspaceSize, executor);
}

QL_STANDIN_EXPORT int aclnnGroupQuant(void* workspace, std::uint64_t size, aclOpExecutor* ex, void* stream) {
    return launch("aclnnGroupQuant", workspace, size, ex, stream);
}
