// The cuda backend's device code, run on the host: the per-element arithmetic (cuda_element.h) bit
// for bit against the oracle ql::quantizeValue, the 16-bit widening against core's conversions,
// the element -> scale mapping against ScaleIndexer, and the whole kernel body (cuda_walk.h) over
// emulated grids against quantizeReference. Built on every machine, with or without CUDA, so CI
// checks everything of the backend except the device itself.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "cuda/cuda_plan.h"
#include "quant/calibration.h"
#include "quant/reference.h"
#include "tensor/float_formats.h"

using namespace ql;
using namespace ql::cuda;

Q_DECLARE_METATYPE(ql::QuantSpec)
Q_DECLARE_METATYPE(ql::Shape)

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> withNeighbours(std::vector<float> v) {
    const std::size_t n = v.size();
    for (std::size_t i = 0; i < n; ++i) {
        v.push_back(std::nextafter(v[i], kInf));
        v.push_back(std::nextafter(v[i], -kInf));
    }
    return v;
}

// Zeros, infinities, NaNs with sign and payload, subnormals, and the edges where rounding tricks,
// 2^22..2^24 and the int32 / int64 conversions could part from the oracle.
std::vector<float> specialValues() {
    std::vector<float> v{0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                         floatFromBits(0xFFC00000u), floatFromBits(0x7F800001u), floatFromBits(0xFFBFFFFFu)};
    const float edges[] = {std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max(), 3e-39f, 1e-8f, 1e30f, 0x1p22f + 0.5f,
                           0x1p23f - 0.5f, 0x1p23f + 1.0f, 0x1p24f, 0x1p24f + 2.0f, 16777217.0f, 2147483520.0f,
                           0x1p31f, 0x1p32f, 0x1p62f, 0x1p63f, 0x1.fffffep62f, 0x1p64f, 1e10f, 127.5f, 255.5f};
    for (float e : edges) {
        v.push_back(e);
        v.push_back(-e);
    }
    return withNeighbours(v);
}

// The values, scales and zero points one element comparison runs over (all combinations).
struct Grid {
    std::vector<float> xs;
    std::vector<float> scales;
    std::vector<float> zeroPoints; // finite only: checkParams rejects others
};

// Quarter steps over `span` on each side (every tie at scale 1 and 0.5, with the floats either
// side), specials, random bit patterns and normal values; steps, reciprocal-sensitive, huge, tiny,
// subnormal, negative, zero and NaN scales (the oracle is defined for all of them: checkParams, not
// the element, decides which a job may use).
Grid elementGrid(int span, int randomCount, unsigned seed) {
    Grid g;
    for (int k = -4 * span; k <= 4 * span; ++k) g.xs.push_back(static_cast<float>(k) / 4.0f);
    g.xs = withNeighbours(g.xs);
    for (float s : specialValues()) g.xs.push_back(s);
    std::mt19937 rng(seed);
    for (int i = 0; i < randomCount; ++i) g.xs.push_back(floatFromBits(static_cast<std::uint32_t>(rng())));
    std::normal_distribution<float> normal(0.0f, 40.0f);
    for (int i = 0; i < randomCount; ++i) g.xs.push_back(normal(rng));
    g.scales = {1.0f, 0.5f, 0.1f, 1.0f / 3.0f, floatFromBits(0x3B0CCEAAu), 1e-30f, 0x1p-140f, -0.75f, 0.0f,
                std::numeric_limits<float>::quiet_NaN()};
    g.zeroPoints = {0.0f, -5.5f, 128.0f, 1e10f};
    return g;
}

// The dense grid for the presets: more values, more scales and zero points.
Grid denseGrid() {
    Grid g = elementGrid(275, 3000, 1);
    for (float s : {2.0f, 3.0f, 1e30f, -0.0f}) g.scales.push_back(s);
    for (float z : {3.0f, 0.25f, -2147483648.0f}) g.zeroPoints.push_back(z);
    return g;
}

QuantSpec specOf(Preset p, Target t, Scheme s, bool symmetric = true) {
    QuantSpec q;
    q.preset = p;
    q.target = t;
    q.scheme = s;
    q.axes = s == Scheme::PerTensor || s == Scheme::Ragged ? std::vector<int>{} : std::vector<int>{-1};
    q.symmetric = symmetric;
    // Block formats compute their own scales; everything else here takes them as given.
    if (p != Preset::MX && p != Preset::NVFP4) q.calibration.method = CalibMethod::Explicit;
    if (s == Scheme::Block) q.block = {16};
    if (s == Scheme::Ragged) q.groupEnds = {16};
    return q;
}

// Compares quantizeElement with quantizeValue over the grid; "" when all agree.
QString firstElementMismatch(const QuantPlan& plan, const Grid& grid) {
    const ElementOp op = elementOpFor(plan);
    for (float s : grid.scales)
        for (float zp : grid.zeroPoints)
            for (float x : grid.xs) {
                const std::int32_t want = quantizeValue(x, s, zp, plan);
                const std::int32_t got = quantizeElement(x, s, zp, op);
                if (got != want)
                    return QStringLiteral("x=%1 (0x%2) scale=%3 zp=%4: got %5, oracle %6")
                        .arg(double(x), 0, 'g', 9)
                        .arg(floatBits(x), 8, 16, QLatin1Char('0'))
                        .arg(double(s), 0, 'g', 9)
                        .arg(double(zp), 0, 'g', 9)
                        .arg(got)
                        .arg(want);
            }
    return {};
}

// Every float whose low 16 bits are one of these: each mini-float code boundary (midpoint) of
// E4M3 / E5M2 / E2M1 has zero low bits, so this holds every midpoint and the floats either side.
std::vector<float> boundarySweep() {
    std::vector<float> v;
    for (std::uint32_t hi = 0; hi < 0x10000u; ++hi)
        for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
            v.push_back(floatFromBits(hi << 16 | lo));
    return v;
}

// Midpoints between consecutive codes (and past the largest), from the decoder, with neighbours.
std::vector<float> codeMidpoints(MiniFloat fmt) {
    std::vector<float> v;
    const int codes = fmt == MiniFloat::E2M1 ? 8 : 128;
    for (int c = 0; c + 1 < codes; ++c) {
        const float a = decodeMiniFloat(static_cast<std::uint8_t>(c), fmt);
        const float b = decodeMiniFloat(static_cast<std::uint8_t>(c + 1), fmt);
        if (!std::isfinite(a) || !std::isfinite(b)) continue;
        for (float m : {a, (a + b) / 2.0f}) {
            v.push_back(m);
            v.push_back(-m);
        }
    }
    const float max = maxFinite(fmt);
    const float step = max - decodeMiniFloat(fmt == MiniFloat::E2M1 ? 0x6 : fmt == MiniFloat::E5M2 ? 0x7A : 0x7D, fmt);
    for (float m : {max + step / 2.0f, max + step, max * 2.0f}) {
        v.push_back(m);
        v.push_back(-m);
    }
    return withNeighbours(v);
}

struct WalkRow {
    const char* name;
    QuantSpec spec;
    Shape shape;
};

QuantSpec walkSpec(Preset p, Target t, Scheme s, std::vector<int> axes, bool symmetric = true) {
    QuantSpec q;
    q.preset = p;
    q.target = t;
    q.scheme = s;
    q.axes = std::move(axes);
    q.symmetric = symmetric;
    if (!symmetric) q.calibration.method = CalibMethod::MinMax;
    return q;
}

// One row per mapping rule the kernel has (rows: zero, linear, table; columns: shared, full,
// block, table), on shapes whose last dimension is and is not a multiple of the vector width.
std::vector<WalkRow> walkRows() {
    using P = Preset;
    using T = Target;
    using S = Scheme;
    std::vector<WalkRow> rows;
    auto add = [&](const char* n, QuantSpec s, Shape shape) {
        try {
            planQuantization(s, shape);
        } catch (const std::exception&) {
            return; // the operator refuses this shape (NVFP4 blocks must divide it)
        }
        rows.push_back({n, std::move(s), std::move(shape)});
    };
    for (Shape shape : {Shape{33, 129}, Shape{8, 64}, Shape{7}, Shape{1, 1031}}) {
        add("torch/per-tensor/int8", walkSpec(P::Torch, T::Int8, S::PerTensor, {}), shape);
        add("torch/per-tensor/uint8-asym", walkSpec(P::Torch, T::UInt8, S::PerTensor, {}, false), shape);
        add("torch/per-channel-last/int32", walkSpec(P::Torch, T::Int32, S::PerChannel, {-1}), shape);
        add("tensorrt/per-tensor/fp8", walkSpec(P::TensorRT, T::Fp8E4M3, S::PerTensor, {}), shape);
        add("mx/fp4", walkSpec(P::MX, T::Fp4E2M1, S::Block, {}), shape);
    }
    for (Shape shape : {Shape{33, 129}, Shape{8, 64}, Shape{3, 5, 64}, Shape{5, 3, 7, 9}}) {
        add("torch/per-channel0/int8", walkSpec(P::Torch, T::Int8, S::PerChannel, {0}), shape);
        add("aclnn-quantize/per-channel-last/fp8-e5m2",
            walkSpec(P::AclnnQuantize, T::Fp8E5M2, S::PerChannel, {-1}), shape);
        add("ascend-quant/per-channel-last/int8-asym", walkSpec(P::AscendQuant, T::Int8, S::PerChannel, {-1}, false),
            shape);
        QuantSpec pg = walkSpec(P::Custom, T::Int4, S::PerGroup, {-1});
        pg.groupSize = 16;
        add("custom/per-group-last-g16/int4", pg, shape);
        pg.axes = {0};
        pg.groupSize = 2;
        add("custom/per-group-axis0-g2/int4", pg, shape);
        add("custom/per-channel-axes-0-and-last/uint8", walkSpec(P::Custom, T::UInt8, S::PerChannel, {0, -1}, false),
            shape);
        add("nvfp4/fp4", walkSpec(P::NVFP4, T::Fp4E2M1, S::Block, {}), shape);
    }
    add("torch/per-channel-middle/int8", walkSpec(P::Torch, T::Int8, S::PerChannel, {1}), {3, 5, 64});
    add("torch/per-channel-middle/int8", walkSpec(P::Torch, T::Int8, S::PerChannel, {1}), {5, 3, 7, 9});
    QuantSpec blk = walkSpec(P::TensorRT, T::Int4, S::Block, {});
    blk.block = {4, 16};
    add("tensorrt/block-4x16/int4", blk, {12, 64});
    QuantSpec ragged = walkSpec(P::NpuGroupQuant, T::Int8, S::Ragged, {});
    ragged.groupEnds = {0, 3, 3, 10, 11};
    ragged.symmetric = false;
    ragged.calibration.method = CalibMethod::MinMax;
    add("npu-group-quant/ragged-rows-empty-groups/int8", ragged, {11, 24});
    QuantSpec raggedLast = walkSpec(P::Custom, T::Int8, S::Ragged, {-1});
    raggedLast.groupEnds = {0, 0, 5, 5, 17, 37};
    add("custom/ragged-last-empty-first-groups/int8", raggedLast, {6, 37});
    add("custom/ragged-last-empty-first-groups/int8", raggedLast, {37});
    add("torch/per-tensor/scalar", walkSpec(P::Torch, T::Int8, S::PerTensor, {}), Shape{});
    add("torch/per-channel0/empty", walkSpec(P::Torch, T::Int8, S::PerChannel, {0}), {4, 0});
    return rows;
}

std::vector<float> walkValues(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 2.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 2 ? d(rng) : std::round(d(rng) * 32.0f) / 32.0f;
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, -0.0f, 1e30f, 3e-39f,
                              0x1p60f, -0x1p63f};
    for (std::size_t k = 0; k < std::size(specials) && 7 * k + 3 < v.size(); ++k) v[7 * k + 3] = specials[k];
    return v;
}

// Input storage the way a job uploads it, and the f32 values core widens it to.
template <class In>
std::vector<In> storeAs(const std::vector<float>& v, std::vector<float>& widened) {
    std::vector<In> out(v.size());
    widened.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_same_v<In, float>) {
            out[i] = v[i];
            widened[i] = v[i];
        } else if constexpr (std::is_same_v<In, Bf16>) {
            out[i] = Bf16{floatToBf16(v[i])};
            widened[i] = bf16ToFloat(out[i].bits);
        } else {
            out[i] = Half{floatToHalf(v[i])};
            widened[i] = halfToFloat(out[i].bits);
        }
    }
    return out;
}

// Runs the kernel body for every thread of an emulated grid and returns the codes.
template <class In, class Code>
Codes emulateKernel(const QuantPlan& plan, const QuantParams& params, const std::vector<In>& x,
                    std::int64_t threads) {
    const HostScaleMap map = buildScaleMap(plan);
    QuantizeArgs a{};
    a.op = elementOpFor(plan);
    a.map = map.hostView();
    a.scales = params.scales.data();
    a.zeroPoints = params.zeroPoints.data();
    a.zeroPointMode = zeroPointModeOf(params);
    a.count = static_cast<std::int64_t>(x.size());
    if (a.count > 0) setStride(a, threads, kVectorWidth<In>);
    Codes codes(plan.codeTarget, a.count, Codes::Uninitialized{});
    if (a.count == 0) return codes; // the backend launches nothing either
    auto* out = reinterpret_cast<Code*>(codes.data());
    withScaleOp(a.op.scaleOp, [&](auto op) {
        for (std::int64_t t = 0; t < threads; ++t) quantizeStrided<decltype(op)::value>(x.data(), out, a, t, threads);
    });
    return codes;
}

// Calibrated parameters; npu_group_quant's one offset is the user's to give, so it gets one here.
QuantParams paramsFor(const QuantPlan& plan, const std::vector<float>& x) {
    if (!plan.scalarZeroPoint || plan.spec.symmetric) return calibrate(plan, x);
    QuantSpec symmetric = plan.spec;
    symmetric.symmetric = true;
    symmetric.calibration.method = CalibMethod::AbsMax;
    QuantParams p = calibrate(planQuantization(symmetric, plan.shape), x);
    p.zeroPoints = {-1.5f};
    return p;
}

template <class In>
QString walkMismatch(const QuantPlan& plan, const std::vector<float>& values, std::int64_t threads) {
    std::vector<float> widened;
    const std::vector<In> stored = storeAs<In>(values, widened);
    const QuantParams params = paramsFor(plan, widened);
    const Codes want = quantizeReference(plan, params, widened);
    const Codes got = plan.codeTarget == Target::Int32 ? emulateKernel<In, std::int32_t>(plan, params, stored, threads)
                                                       : emulateKernel<In, std::uint8_t>(plan, params, stored, threads);
    if (got.size() != want.size()) return QStringLiteral("code count %1, want %2").arg(got.size()).arg(want.size());
    for (std::int64_t i = 0; i < want.size(); ++i)
        if (got.at(i) != want.at(i))
            return QStringLiteral("element %1 (x=%2): got %3, reference %4")
                .arg(i)
                .arg(double(widened[static_cast<std::size_t>(i)]), 0, 'g', 9)
                .arg(got.at(i))
                .arg(want.at(i));
    return {};
}

} // namespace

class TestCudaElement : public QObject {
    Q_OBJECT
private slots:
    void presetConventions_data();
    void presetConventions();
    void everyConvention_data();
    void everyConvention();
    void miniFloatEncoder_data();
    void miniFloatEncoder();
    void floatTargetsAtCodeBoundaries_data();
    void floatTargetsAtCodeBoundaries();
    void widening16Bit();
    void fastDivide();
    void cursorMatchesScaleIndexer_data();
    void cursorMatchesScaleIndexer();
    void kernelBodyMatchesReference_data();
    void kernelBodyMatchesReference();
};

// Each preset's convention as planQuantization resolves it (conventionOf), per target it takes,
// with its rounding modes, zero-point stages (symmetric / asymmetric) and sqrt mode.
void TestCudaElement::presetConventions_data() {
    QTest::addColumn<QuantSpec>("spec");
    const Preset presets[] = {Preset::Torch, Preset::TensorRT, Preset::AclnnQuantize, Preset::AscendQuant,
                              Preset::NpuGroupQuant, Preset::PyPTO, Preset::MX, Preset::NVFP4};
    const Target targets[] = {Target::Int8, Target::UInt8, Target::Int4, Target::UInt4,
                              Target::Int32, Target::Fp8E4M3, Target::Fp8E5M2, Target::Fp4E2M1};
    const std::optional<Rounding> roundings[] = {std::nullopt, Rounding::HalfToEven, Rounding::HalfAwayFromZero,
                                                 Rounding::Floor, Rounding::Ceil, Rounding::Trunc};
    int rows = 0;
    std::vector<QuantPlan> seen;
    for (Preset p : presets)
        for (Target t : targets)
            for (Scheme s : {Scheme::PerTensor, Scheme::PerChannel, Scheme::Block, Scheme::Ragged})
                for (bool sym : {true, false})
                    for (const auto& rounding : roundings)
                        for (bool sqrt : {false, true}) {
                            QuantSpec spec = specOf(p, t, s, sym);
                            spec.rounding = rounding;
                            spec.sqrtMode = sqrt;
                            QuantPlan plan;
                            try {
                                plan = planQuantization(spec, {16, 16});
                            } catch (const std::exception&) {
                                continue; // the operator has no such variant
                            }
                            // The element sees the convention and the code range only: one row each.
                            const auto same = [&](const QuantPlan& q) {
                                return q.convention == plan.convention && q.codeTarget == plan.codeTarget &&
                                       q.qmin() == plan.qmin();
                            };
                            if (std::any_of(seen.begin(), seen.end(), same)) continue;
                            seen.push_back(plan);
                            QTest::addRow("%s/%s/%s/%s/%s%s", std::string(nameOf(p)).c_str(),
                                          std::string(nameOf(t)).c_str(), std::string(nameOf(s)).c_str(),
                                          sym ? "sym" : "asym",
                                          rounding ? std::string(nameOf(*rounding)).c_str() : "default",
                                          sqrt ? "/sqrt" : "")
                                << spec;
                            ++rows;
                        }
    QVERIFY(rows > 30); // every preset contributes
}

void TestCudaElement::presetConventions() {
    QFETCH(QuantSpec, spec);
    const QuantPlan plan = planQuantization(spec, {16, 16});
    QCOMPARE(plan.convention, conventionOf(spec));
    static const Grid grid = denseGrid();
    const QString mismatch = firstElementMismatch(plan, grid);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

// Custom conventions: every scale op x zero-point stage x rounding x NaN policy x zero-scale rule
// for the integer targets (and narrow ranges), every scale op x overflow for the float targets.
void TestCudaElement::everyConvention_data() {
    QTest::addColumn<QuantSpec>("spec");
    const ScaleOp ops[] = {ScaleOp::Divide, ScaleOp::MultiplyReciprocal, ScaleOp::Multiply, ScaleOp::MultiplyTwice};
    for (ScaleOp op : ops)
        for (int zs = 0; zs < 4; ++zs) { // zeroScaleMeansOne, zeroScaleGivesZero
            const std::string zsName = std::to_string(zs);
            for (Target t : {Target::Int8, Target::UInt8, Target::Int4, Target::UInt4, Target::Int32})
                for (bool narrow : {false, true}) {
                    if (narrow && codeMin(t) >= 0) continue;
                    for (ZeroPointStage stage : {ZeroPointStage::BeforeRounding, ZeroPointStage::AfterRounding})
                        for (int r = 0; r < 5; ++r)
                            for (NanPolicy nan : {NanPolicy::Zero, NanPolicy::X86IntCast}) {
                                Convention c;
                                c.scaleOp = op;
                                c.zeroPoint = stage;
                                c.rounding = static_cast<Rounding>(r);
                                c.nan = nan;
                                c.zeroScaleMeansOne = zs & 1;
                                c.zeroScaleGivesZero = zs & 2;
                                QuantSpec spec = specOf(Preset::Custom, t, Scheme::PerTensor, false);
                                spec.narrowRange = narrow;
                                spec.custom = c;
                                QTest::addRow("%s/%s%s/%s/%s/%s/zero-scale-%s", std::string(nameOf(op)).c_str(),
                                              std::string(nameOf(t)).c_str(), narrow ? "-narrow" : "",
                                              std::string(nameOf(stage)).c_str(),
                                              std::string(nameOf(c.rounding)).c_str(),
                                              nan == NanPolicy::Zero ? "nan-zero" : "nan-x86", zsName.c_str())
                                    << spec;
                            }
                }
            for (Target t : {Target::Fp8E4M3, Target::Fp8E5M2, Target::Fp4E2M1})
                for (Overflow o : {Overflow::Saturate, Overflow::NonSaturating}) {
                    Convention c;
                    c.scaleOp = op;
                    c.overflow = o;
                    c.zeroScaleMeansOne = zs & 1;
                    c.zeroScaleGivesZero = zs & 2;
                    QuantSpec spec = specOf(Preset::Custom, t, Scheme::PerTensor);
                    spec.custom = c;
                    QTest::addRow("%s/%s/%s/zero-scale-%s", std::string(nameOf(op)).c_str(),
                                  std::string(nameOf(t)).c_str(), o == Overflow::Saturate ? "sat" : "nonsat",
                                  zsName.c_str())
                        << spec;
                }
        }
}

void TestCudaElement::everyConvention() {
    QFETCH(QuantSpec, spec);
    const QuantPlan plan = planQuantization(spec, {4});
    static const Grid grid = elementGrid(20, 100, 2);
    const QString mismatch = firstElementMismatch(plan, grid);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

void TestCudaElement::miniFloatEncoder_data() {
    QTest::addColumn<int>("fmt");
    QTest::addColumn<int>("overflow");
    for (MiniFloat f : {MiniFloat::E4M3FN, MiniFloat::E5M2, MiniFloat::E2M1})
        for (Overflow o : {Overflow::Saturate, Overflow::NonSaturating})
            QTest::addRow("%s/%s", f == MiniFloat::E4M3FN ? "e4m3" : f == MiniFloat::E5M2 ? "e5m2" : "e2m1",
                          o == Overflow::Saturate ? "sat" : "nonsat")
                << int(f) << int(o);
}

// Every midpoint and its neighbours over the whole float range, plus every special.
void TestCudaElement::miniFloatEncoder() {
    QFETCH(int, fmt);
    QFETCH(int, overflow);
    const auto f = static_cast<MiniFloat>(fmt);
    const auto o = static_cast<Overflow>(overflow);
    const MiniFloatSpec spec = miniFloatSpec(f);
    std::vector<float> xs = boundarySweep();
    for (float s : specialValues()) xs.push_back(s);
    for (float m : codeMidpoints(f)) xs.push_back(m);
    for (float x : xs) {
        const std::uint8_t want = encodeMiniFloat(x, f, o);
        const std::uint8_t got = encodeMiniFloatBits(x, spec, o == Overflow::Saturate);
        if (got != want)
            QFAIL(qPrintable(QStringLiteral("x=%1 (0x%2): got 0x%3, oracle 0x%4")
                                 .arg(double(x), 0, 'g', 9)
                                 .arg(floatBits(x), 8, 16, QLatin1Char('0'))
                                 .arg(got, 2, 16, QLatin1Char('0'))
                                 .arg(want, 2, 16, QLatin1Char('0'))));
    }
}

void TestCudaElement::floatTargetsAtCodeBoundaries_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addRow("tensorrt/fp8-e4m3") << specOf(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor);
    QTest::addRow("tensorrt/fp4-e2m1") << specOf(Preset::TensorRT, Target::Fp4E2M1, Scheme::PerTensor);
    QTest::addRow("aclnn-quantize/fp8-e5m2") << specOf(Preset::AclnnQuantize, Target::Fp8E5M2, Scheme::PerTensor);
    QTest::addRow("ascend-quant/fp8-e4m3") << specOf(Preset::AscendQuant, Target::Fp8E4M3, Scheme::PerTensor);
    QTest::addRow("mx/fp8-e5m2") << specOf(Preset::MX, Target::Fp8E5M2, Scheme::Block);
    QTest::addRow("nvfp4/fp4-e2m1") << specOf(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block);
}

// The same boundaries through the whole element path (scale op first), with the preset's scale rules.
void TestCudaElement::floatTargetsAtCodeBoundaries() {
    QFETCH(QuantSpec, spec);
    const QuantPlan plan = planQuantization(spec, {16, 16});
    const ElementOp op = elementOpFor(plan);
    const std::vector<float> xs = codeMidpoints(miniFloatOf(plan.codeTarget));
    for (float s : {1.0f, 0.5f, 0.1f, 3.0f, 0x1p-20f, 0.0f})
        for (float x : xs) {
            const std::int32_t want = quantizeValue(x, s, 0.0f, plan), got = quantizeElement(x, s, 0.0f, op);
            if (got != want)
                QFAIL(qPrintable(QStringLiteral("x=%1 s=%2: got %3, oracle %4")
                                     .arg(double(x), 0, 'g', 9)
                                     .arg(double(s))
                                     .arg(got)
                                     .arg(want)));
        }
}

// All 65536 bit patterns of each: the same float bits as core's conversion (NaN payloads included).
void TestCudaElement::widening16Bit() {
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        if (floatBits(widen(Half{h})) != floatBits(halfToFloat(h)))
            QFAIL(qPrintable(QStringLiteral("f16 0x%1: got 0x%2, core 0x%3")
                                 .arg(b, 4, 16, QLatin1Char('0'))
                                 .arg(floatBits(widen(Half{h})), 8, 16, QLatin1Char('0'))
                                 .arg(floatBits(halfToFloat(h)), 8, 16, QLatin1Char('0'))));
        QCOMPARE(floatBits(widen(Bf16{h})), floatBits(bf16ToFloat(h)));
    }
}

void TestCudaElement::fastDivide() {
    std::vector<std::uint32_t> divisors;
    for (std::uint32_t d = 1; d <= 300; ++d) divisors.push_back(d);
    for (std::uint32_t d : {1000u, 4095u, 4096u, 4097u, 65535u, 65536u, 65537u, 1u << 20, (1u << 30) + 1, 0x7FFFFFFFu})
        divisors.push_back(d);
    std::mt19937 rng(5);
    for (std::uint32_t d : divisors) {
        const FastDivide f = FastDivide::of(d);
        std::vector<std::uint32_t> ns;
        for (std::uint32_t n = 0; n < 3000; ++n) ns.push_back(n);
        for (std::uint32_t k : {1u, 2u, 3u, 1000u, 0x7FFFFFFFu / d})
            for (std::int64_t delta = -1; delta <= 1; ++delta) {
                const std::int64_t n = static_cast<std::int64_t>(k) * d + delta;
                if (n >= 0 && n < 0x80000000LL) ns.push_back(static_cast<std::uint32_t>(n));
            }
        for (int i = 0; i < 2000; ++i) ns.push_back(static_cast<std::uint32_t>(rng()) & 0x7FFFFFFFu);
        ns.push_back(0x7FFFFFFFu);
        for (std::uint32_t n : ns)
            if (f.divide(n) != n / d)
                QFAIL(qPrintable(QStringLiteral("%1 / %2: got %3").arg(n).arg(d).arg(f.divide(n))));
    }
}

void TestCudaElement::cursorMatchesScaleIndexer_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    for (const WalkRow& r : walkRows())
        QTest::addRow("%s/%s", r.name, toString(r.shape).c_str()) << r.spec << r.shape;
}

// Cursor::at for every element, next() across every row end, and jump() by grid strides that are
// below, equal to and above a row, all equal to ScaleIndexer::scaleIndexOf.
void TestCudaElement::cursorMatchesScaleIndexer() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    const QuantPlan plan = planQuantization(spec, shape);
    const HostScaleMap map = buildScaleMap(plan);
    const ScaleMapView view = map.hostView();
    const ScaleIndexer indexer(plan.layout, plan.shape);
    const std::int64_t n = elementCount(shape);
    if (n == 0) return; // no element, nothing is launched
    Cursor walk = Cursor::at(0, view);
    for (std::int64_t i = 0; i < n; ++i) {
        QCOMPARE(Cursor::at(i, view).scaleIndex(view), indexer.scaleIndexOf(i));
        QCOMPARE(walk.scaleIndex(view), indexer.scaleIndexOf(i));
        walk.next(view);
    }
    for (std::int64_t stride : {std::int64_t{1}, std::int64_t{3}, map.inner, map.inner + 5, 4 * map.inner - 1}) {
        QuantizeArgs a{};
        a.map = view;
        setStride(a, stride, 1);
        for (std::int64_t start = 0; start < std::min<std::int64_t>(n, stride); ++start) {
            Cursor c = Cursor::at(start, view);
            for (std::int64_t i = start + stride; i < n; i += stride) {
                c.jump(a.strideRows, a.strideCols, view);
                c.base = view.rowStart(c.row);
                QCOMPARE(c.scaleIndex(view), indexer.scaleIndexOf(i));
            }
        }
    }
}

void TestCudaElement::kernelBodyMatchesReference_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("threads");
    for (const WalkRow& r : walkRows())
        for (DType dt : {DType::F32, DType::BF16, DType::F16})
            for (int threads : {1, 5, 64})
                QTest::addRow("%s/%s/%s/%d-threads", r.name, toString(r.shape).c_str(), std::string(nameOf(dt)).c_str(),
                              threads)
                    << r.spec << r.shape << int(dt) << threads;
}

// The kernel body as the device runs it (vectors, row carries, scalar tail, every thread of a grid)
// against the reference on the same widened values and the same calibrated parameters.
void TestCudaElement::kernelBodyMatchesReference() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(int, dtype);
    QFETCH(int, threads);
    const QuantPlan plan = planQuantization(spec, shape);
    const auto values = walkValues(elementCount(shape), 11);
    QString mismatch;
    switch (static_cast<DType>(dtype)) {
    case DType::BF16: mismatch = walkMismatch<Bf16>(plan, values, threads); break;
    case DType::F16: mismatch = walkMismatch<Half>(plan, values, threads); break;
    default: mismatch = walkMismatch<float>(plan, values, threads); break;
    }
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

QTEST_GUILESS_MAIN(TestCudaElement)
#include "tst_cuda_element.moc"
