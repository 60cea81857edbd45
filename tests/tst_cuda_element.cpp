// The cuda backend's per-element arithmetic (cuda_element.h), run on the host: bit for bit against
// the oracle ql::quantizeValue for every preset's convention and every custom one, the mini-float
// encoder at every code boundary, and the 16-bit widening against core's conversions. Built on
// every machine, with or without CUDA, so CI checks the device arithmetic without a device.
#include "cuda/cuda_plan.h"
#include "quant/reference.h"
#include "tensor/float_formats.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

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
    std::vector<float> v{0.0f,
                         -0.0f,
                         kInf,
                         -kInf,
                         std::numeric_limits<float>::quiet_NaN(),
                         floatFromBits(0xFFC00000u),
                         floatFromBits(0x7F800001u),
                         floatFromBits(0xFFBFFFFFu)};
    const float edges[] = {std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max(),
                           3e-39f,
                           1e-8f,
                           1e30f,
                           0x1p22f + 0.5f,
                           0x1p23f - 0.5f,
                           0x1p23f + 1.0f,
                           0x1p24f,
                           0x1p24f + 2.0f,
                           16777217.0f,
                           2147483520.0f,
                           0x1p31f,
                           0x1p32f,
                           0x1p62f,
                           0x1p63f,
                           0x1.fffffep62f,
                           0x1p64f,
                           1e10f,
                           127.5f,
                           255.5f};
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
    for (int k = -4 * span; k <= 4 * span; ++k)
        g.xs.push_back(static_cast<float>(k) / 4.0f);
    g.xs = withNeighbours(g.xs);
    for (float s : specialValues())
        g.xs.push_back(s);
    std::mt19937 rng(seed);
    for (int i = 0; i < randomCount; ++i)
        g.xs.push_back(floatFromBits(static_cast<std::uint32_t>(rng())));
    std::normal_distribution<float> normal(0.0f, 40.0f);
    for (int i = 0; i < randomCount; ++i)
        g.xs.push_back(normal(rng));
    g.scales = {1.0f,
                0.5f,
                0.1f,
                1.0f / 3.0f,
                floatFromBits(0x3B0CCEAAu),
                1e-30f,
                0x1p-140f,
                -0.75f,
                0.0f,
                kInf,
                std::numeric_limits<float>::quiet_NaN(),
                floatFromBits(0xFFC00001u)};
    g.zeroPoints = {0.0f, -5.5f, 128.0f, 1e10f};
    return g;
}

// The dense grid for the presets: more values, more scales and zero points.
Grid denseGrid() {
    Grid g = elementGrid(275, 3000, 1);
    for (float s : {2.0f, 3.0f, 1e30f, -0.0f})
        g.scales.push_back(s);
    for (float z : {3.0f, 0.25f, -2147483648.0f})
        g.zeroPoints.push_back(z);
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
    if (s == Scheme::Block && !isBlockFormat(p)) q.block = {16}; // (MX and NVFP4 fix their own)
    if (s == Scheme::Ragged) q.groupEnds = {16};
    return q;
}

// Compares quantizeElement with quantizeValue over the grid; "" when all agree.
QString firstElementMismatch(const ResolvedSpec& plan, const Grid& grid) {
    const ElementOp op = elementOpFor(plan);
    // With a NaN on both sides of a multiplication, x86 returns the NaN of whichever operand the
    // compiler put first: the oracle's own build decides the code's sign, so only that is let go.
    const bool commutes = plan.convention.scaleOp != ScaleOp::Divide;
    const std::int32_t signBit = op.floatTarget ? std::int32_t{1} << op.fmt.signBit : 0;
    for (float s : grid.scales)
        for (float zp : grid.zeroPoints)
            for (float x : grid.xs) {
                std::int32_t want = quantizeValue(x, s, zp, plan);
                std::int32_t got = quantizeElement(x, s, zp, op);
                if (commutes && x != x && s != s) {
                    want &= ~signBit;
                    got &= ~signBit;
                }
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
    const float step = max - decodeMiniFloat(fmt == MiniFloat::E2M1   ? 0x6
                                             : fmt == MiniFloat::E5M2 ? 0x7A
                                                                      : 0x7D,
                                             fmt);
    for (float m : {max + step / 2.0f, max + step, max * 2.0f}) {
        v.push_back(m);
        v.push_back(-m);
    }
    return withNeighbours(v);
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
    void nanCodesFollowX86();
    void widening16Bit();
};

// Each preset's convention as resolveSpec resolves it (conventionOf), per target it takes,
// with its rounding modes, zero-point stages (symmetric / asymmetric) and sqrt mode.
void TestCudaElement::presetConventions_data() {
    QTest::addColumn<QuantSpec>("spec");
    const Preset presets[] = {Preset::Torch,       Preset::TensorRT,      Preset::AclnnQuantize,
                              Preset::AscendQuant, Preset::NpuGroupQuant, Preset::PyPTO,
                              Preset::MX,          Preset::NVFP4};
    const Target targets[] = {Target::Int8,  Target::UInt8,   Target::Int4,    Target::UInt4,
                              Target::Int32, Target::Fp8E4M3, Target::Fp8E5M2, Target::Fp4E2M1};
    const std::optional<Rounding> roundings[] = {
        std::nullopt,    Rounding::HalfToEven, Rounding::HalfAwayFromZero,
        Rounding::Floor, Rounding::Ceil,       Rounding::Trunc};
    int rows = 0;
    std::vector<ResolvedSpec> seen;
    for (Preset p : presets)
        for (Target t : targets)
            for (Scheme s : {Scheme::PerTensor, Scheme::PerChannel, Scheme::Block, Scheme::Ragged})
                for (bool sym : {true, false})
                    for (const auto& rounding : roundings)
                        for (bool sqrt : {false, true}) {
                            QuantSpec spec = specOf(p, t, s, sym);
                            spec.rounding = rounding;
                            spec.sqrtMode = sqrt;
                            ResolvedSpec plan;
                            try {
                                plan = resolveSpec(spec, {16, 16});
                            } catch (const std::exception&) {
                                continue; // the operator has no such variant
                            }
                            // The element sees the convention and the code range only: one row each.
                            const auto same = [&](const ResolvedSpec& q) {
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
    const ResolvedSpec plan = resolveSpec(spec, {16, 16});
    QCOMPARE(plan.convention, conventionOf(spec));
    static const Grid grid = denseGrid();
    const QString mismatch = firstElementMismatch(plan, grid);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

// Custom conventions: every scale op x zero-point stage x rounding x NaN policy x zero-scale rule
// for the integer targets (and narrow ranges), every scale op x overflow for the float targets.
void TestCudaElement::everyConvention_data() {
    QTest::addColumn<QuantSpec>("spec");
    const ScaleOp ops[] = {ScaleOp::Divide, ScaleOp::MultiplyReciprocal, ScaleOp::Multiply,
                           ScaleOp::MultiplyTwice};
    for (ScaleOp op : ops)
        for (int zs = 0; zs < 4; ++zs) { // zeroScaleMeansOne, zeroScaleGivesZero
            const std::string zsName = std::to_string(zs);
            for (Target t : {Target::Int8, Target::UInt8, Target::Int4, Target::UInt4, Target::Int32})
                for (bool narrow : {false, true}) {
                    if (narrow && codeMin(t) >= 0) continue;
                    for (ZeroPointStage stage :
                         {ZeroPointStage::BeforeRounding, ZeroPointStage::AfterRounding})
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
                                QTest::addRow("%s/%s%s/%s/%s/%s/zero-scale-%s",
                                              std::string(nameOf(op)).c_str(), std::string(nameOf(t)).c_str(),
                                              narrow ? "-narrow" : "", std::string(nameOf(stage)).c_str(),
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
    const ResolvedSpec plan = resolveSpec(spec, {4});
    static const Grid grid = elementGrid(20, 100, 2);
    const QString mismatch = firstElementMismatch(plan, grid);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

void TestCudaElement::miniFloatEncoder_data() {
    QTest::addColumn<int>("fmt");
    QTest::addColumn<int>("overflow");
    for (MiniFloat f : {MiniFloat::E4M3FN, MiniFloat::E5M2, MiniFloat::E2M1})
        for (Overflow o : {Overflow::Saturate, Overflow::NonSaturating})
            QTest::addRow("%s/%s",
                          f == MiniFloat::E4M3FN ? "e4m3"
                          : f == MiniFloat::E5M2 ? "e5m2"
                                                 : "e2m1",
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
    for (float s : specialValues())
        xs.push_back(s);
    for (float m : codeMidpoints(f))
        xs.push_back(m);
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
    QTest::addRow("aclnn-quantize/fp8-e5m2")
        << specOf(Preset::AclnnQuantize, Target::Fp8E5M2, Scheme::PerTensor);
    QTest::addRow("ascend-quant/fp8-e4m3") << specOf(Preset::AscendQuant, Target::Fp8E4M3, Scheme::PerTensor);
    QTest::addRow("mx/fp8-e5m2") << specOf(Preset::MX, Target::Fp8E5M2, Scheme::Block);
    QTest::addRow("nvfp4/fp4-e2m1") << specOf(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block);
}

// The same boundaries through the whole element path (scale op first), with the preset's scale rules.
void TestCudaElement::floatTargetsAtCodeBoundaries() {
    QFETCH(QuantSpec, spec);
    const ResolvedSpec plan = resolveSpec(spec, {16, 16});
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

// On a GPU every NaN an operation makes is the one canonical +NaN, so the NaN a float code
// carries comes from x86NaN alone: it must give the oracle's code for every NaN the grid makes
// (NaN inputs of either sign, NaN scales, inf / inf, 0 * inf).
void TestCudaElement::nanCodesFollowX86() {
    const Grid grid = elementGrid(2, 0, 3);
    int nans = 0;
    const ScaleOp ops[] = {ScaleOp::Divide, ScaleOp::MultiplyReciprocal, ScaleOp::Multiply,
                           ScaleOp::MultiplyTwice};
    for (Target t : {Target::Fp8E4M3, Target::Fp8E5M2, Target::Fp4E2M1})
        for (ScaleOp scaleOp : ops) {
            Convention c;
            c.scaleOp = scaleOp;
            QuantSpec spec = specOf(Preset::Custom, t, Scheme::PerTensor);
            spec.custom = c;
            const ResolvedSpec plan = resolveSpec(spec, {4});
            const MiniFloatSpec fmt = miniFloatSpec(miniFloatOf(t));
            for (float s : grid.scales)
                for (float x : grid.xs) {
                    const float scaled = scaleOp == ScaleOp::Divide               ? x / s
                                         : scaleOp == ScaleOp::MultiplyReciprocal ? x * (1.0f / s)
                                         : scaleOp == ScaleOp::Multiply           ? x * s
                                                                                  : (x * s) * s;
                    if (scaled == scaled || (x != x && s != s && scaleOp != ScaleOp::Divide)) continue;
                    ++nans;
                    const int want = quantizeValue(x, s, 0.0f, plan);
                    const int got = encodeMiniFloatBits(x86NaN(x, s), fmt, true);
                    if (got != want)
                        QFAIL(qPrintable(QStringLiteral("%1 x=0x%2 s=0x%3: got 0x%4, oracle 0x%5")
                                             .arg(QString::fromLatin1(nameOf(scaleOp).data()))
                                             .arg(floatBits(x), 8, 16, QLatin1Char('0'))
                                             .arg(floatBits(s), 8, 16, QLatin1Char('0'))
                                             .arg(got, 2, 16, QLatin1Char('0'))
                                             .arg(want, 2, 16, QLatin1Char('0'))));
                }
        }
    QVERIFY(nans > 100);
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

QTEST_GUILESS_MAIN(TestCudaElement)
#include "tst_cuda_element.moc"
