// Every built backend against cpu-reference, code for code, scale for scale and accumulator for
// accumulator (counts and histograms exactly, sums within kSumTolerance), over a grid of
// (preset, layout, target, input dtype, shape, parameters). Shapes are odd and even so that vector
// tails, chunk edges inside rows and short last blocks all occur. A row skips with a reason when
// its backend is unavailable or does not support the plan.
#include "accumulator_checks.h"
#include "analysis/analyzer.h"
#include "backend/registry.h"
#include "backend_test_util.h"
#include "base/error.h"
#include "builtin_backends.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_reference_backend.h"
#include "quant/range_rule.h"
#include "quant/reference.h"
#include "tensor/float_formats.h"

#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>

using namespace ql;
using namespace qltest;

namespace {

// The cpu backend's statistics are made beside its quantize loop, sliced as its chunks are: other
// chunk sizes (a chunk inside a row, hundreds of chunks grouped into slices) must agree with the
// oracle as the registry's does.
void checkOtherCuts(const BackendTask& job, const Result& ref) {
    for (const int chunk : {999, 64}) {
        const Result got = CpuBackend(3, chunk).run(job);
        QVERIFY2(got.statistics, "a job asking for statistics got none");
        compareAccumulators(*got.statistics, *ref.statistics);
        // Statistics alone: each part's codes made in a buffer of its worker's, the tensor's never
        // held; the same params and the same bits of every statistic, and no codes back where the
        // analysis measures in parts.
        BackendTask alone = job;
        alone.statistics->keepCodes = false;
        const Result parts = CpuBackend(3, chunk).run(alone);
        QVERIFY2(parts.statistics, "a job asking for statistics alone got none");
        QCOMPARE(parts.params.scales.size(), got.params.scales.size());
        QVERIFY(std::memcmp(parts.params.scales.data(), got.params.scales.data(),
                            got.params.scales.size() * sizeof(float)) == 0);
        QCOMPARE(parts.params.zeroPoints, got.params.zeroPoints);
        compareAccumulators(*parts.statistics, *got.statistics, true);
        const bool inParts = SlicedAnalysis::measuresInParts(job.plan, elementCount(job.plan.shape));
        QCOMPARE(parts.codes.size(), inParts ? 0 : got.codes.size());
        if (QTest::currentTestFailed()) {
            qWarning("with chunks of %d elements", chunk);
            return;
        }
    }
}

} // namespace

class TestBackendConformance : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qInfo("cpu kernels: %s", cpu::kernelIsa()); }
    void gridDoesNotShrink();
    void matchesReference_data();
    void matchesReference();
    void statisticsDoNotDependOnThreads();
    void floatKernelsSweep_data();
    void floatKernelsSweep();
    void nvfp4ScalesSweep();
};

void TestBackendConformance::matchesReference_data() {
    QTest::addColumn<QString>("backend");
    QTest::addColumn<int>("spec");
    QTest::addColumn<int>("shape");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QString>("params");
    BackendRegistry registry;
    registerBuiltinBackends(registry);
    const auto specs = conformanceSpecs();
    for (const auto& b : registry.backends()) {
        if (b->name() == "cpu-reference") continue;
        for (std::size_t s = 0; s < specs.size(); ++s)
            for (std::size_t sh = 0; sh < conformanceShapes().size(); ++sh) {
                try {
                    resolveSpec(specs[s].spec, conformanceShapes()[sh]);
                } catch (const std::exception&) {
                    continue; // the operator refuses this shape: nothing to compare
                }
                for (DType dt : {DType::F32, DType::BF16, DType::F16})
                    for (const char* mode : {"calibrated", "perturbed", "pow2"})
                        QTest::addRow("%s/%s/%s/%s/%s", b->name().c_str(), specs[s].name,
                                      toString(conformanceShapes()[sh]).c_str(),
                                      std::string(nameOf(dt)).c_str(), mode)
                            << QString::fromStdString(b->name()) << int(s) << int(sh) << int(dt)
                            << QString::fromLatin1(mode);
            }
    }
}

// The grid leaves out (spec, shape) pairs the operator refuses; a planner regression must not
// shrink it unnoticed. Every spec plans on some shape, and the planned pairs are counted exactly
// (change the count with the grid, deliberately).
void TestBackendConformance::gridDoesNotShrink() {
    constexpr int kPlannedPairs = 187;
    int planned = 0;
    for (const auto& spec : conformanceSpecs()) {
        int shapes = 0;
        for (const auto& shape : conformanceShapes()) {
            try {
                resolveSpec(spec.spec, shape);
                ++shapes;
            } catch (const std::exception&) {
            }
        }
        QVERIFY2(shapes > 0, spec.name);
        planned += shapes;
    }
    QCOMPARE(planned, kPlannedPairs);
}

void TestBackendConformance::matchesReference() {
    QFETCH(QString, backend);
    QFETCH(int, spec);
    QFETCH(int, shape);
    QFETCH(int, dtype);
    QFETCH(QString, params);
    BackendRegistry registry;
    registerBuiltinBackends(registry);
    const Backend* b = registry.find(backend.toStdString());
    QVERIFY(b);
    if (auto why = b->unavailableReason()) QSKIP(("unavailable: " + *why).c_str());
    BackendTask job;
    job.plan = resolveSpec(conformanceSpecs()[static_cast<std::size_t>(spec)].spec,
                           conformanceShapes()[static_cast<std::size_t>(shape)]);
    if (auto why = b->supports(job.plan)) QSKIP(("unsupported: " + *why).c_str());
    const auto values = conformanceValues(elementCount(job.plan.shape), 7u + static_cast<unsigned>(spec));
    job.tensor = tensorOf(values, job.plan.shape, static_cast<DType>(dtype));
    const CpuReferenceBackend reference;
    if (params != QLatin1String("calibrated")) {
        QuantParams p;
        try {
            p = reference.run(job).params;
        } catch (const QuantError& e) {
            QSKIP(qPrintable(QStringLiteral("the reference cannot calibrate this job: %1")
                                 .arg(QString::fromUtf8(e.what()))));
        }
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> f(0.25f, 1.0f);
        const bool multiply = job.plan.convention.scaleOp == ScaleOp::Multiply ||
                              job.plan.convention.scaleOp == ScaleOp::MultiplyTwice;
        for (float& s : p.scales)
            if (std::isfinite(s) && s != 0.0f)
                s = params == QLatin1String("pow2") ? (multiply ? 8.0f : 0.125f) : s * f(rng);
        job.params = p;
    }
    // Every backend fills the report's accumulators; cpu-reference's come from the scalar oracle.
    std::vector<float> importance;
    job.statistics = everyStatistic(job.plan.shape, importance);
    Result ref, got;
    try {
        ref = reference.run(job);
    } catch (const QuantError& e) {
        // A job the reference refuses must be refused by the backend too.
        QVERIFY_THROWS_EXCEPTION(QuantError, b->run(job));
        QSKIP(qPrintable(
            QStringLiteral("the reference refuses this job: %1").arg(QString::fromUtf8(e.what()))));
    }
    try {
        got = b->run(job);
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
    QCOMPARE(got.params.scales.size(), ref.params.scales.size());
    QVERIFY(std::memcmp(got.params.scales.data(), ref.params.scales.data(), ref.params.scales.size() * 4) ==
            0);
    QCOMPARE(got.params.zeroPoints, ref.params.zeroPoints);
    QCOMPARE(got.params.scaleCodes, ref.params.scaleCodes);
    QCOMPARE(got.codes.size(), ref.codes.size());
    std::int64_t mismatches = 0, first = -1;
    for (std::int64_t i = 0; i < ref.codes.size(); ++i)
        if (got.codes.at(i) != ref.codes.at(i) && mismatches++ == 0) first = i;
    if (mismatches)
        QFAIL(qPrintable(
            QStringLiteral("%1 mismatched codes; first at %2: x=%3 got %4 want %5")
                .arg(mismatches)
                .arg(first)
                .arg(double(job.tensor.toFloatVector()[static_cast<std::size_t>(first)]), 0, 'g', 9)
                .arg(got.codes.at(first))
                .arg(ref.codes.at(first))));
    QVERIFY2(ref.statistics && got.statistics, "a job asking for statistics got none");
    compareAccumulators(*got.statistics, *ref.statistics);
    if (QTest::currentTestFailed()) return;
    if (backend == QLatin1String("cpu")) checkOtherCuts(job, ref);
}

// The statistics the cpu backend makes beside its quantize loop are the same bits on any number of
// threads, and agree with the oracle, whether its chunks own their groups (scales along the rows) or
// share them (along the columns, or one for the tensor).
void TestBackendConformance::statisticsDoNotDependOnThreads() {
    for (Scheme s : {Scheme::PerTensor, Scheme::PerChannel}) {
        for (int axis : {0, 1}) {
            if (s == Scheme::PerTensor && axis == 1) continue;
            QuantSpec spec;
            spec.scheme = s;
            spec.axes = s == Scheme::PerTensor ? std::vector<int>{} : std::vector<int>{axis};
            BackendTask job;
            job.plan = resolveSpec(spec, {37, 301});
            const auto v = conformanceValues(37 * 301, 5);
            job.values = v;
            std::vector<float> importance;
            job.statistics = everyStatistic(job.plan.shape, importance);
            const Result ref = CpuReferenceBackend().run(job);
            const Result one = CpuBackend(1, 200).run(job), three = CpuBackend(3, 200).run(job);
            QVERIFY(ref.statistics && one.statistics && three.statistics);
            compareAccumulators(*one.statistics, *ref.statistics);
            compareAccumulators(*three.statistics, *one.statistics, true);
            if (QTest::currentTestFailed()) return;
        }
    }
}

void TestBackendConformance::floatKernelsSweep_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<int>("overflow");
    for (Target t : {Target::Fp8E4M3, Target::Fp8E5M2, Target::Fp4E2M1})
        for (Overflow o : {Overflow::Saturate, Overflow::NonSaturating})
            QTest::addRow("%s/%s", std::string(nameOf(t)).c_str(),
                          o == Overflow::Saturate ? "saturate" : "non-saturating")
                << int(t) << int(o);
}

// The vector mini-float encoder against the oracle's, value for value (scale 1, so t = x): a
// stride through every fp32 bit pattern, and around every code of the format its value, the
// midpoints to its neighbours, and the floats either side of each.
void TestBackendConformance::floatKernelsSweep() {
    QFETCH(int, target);
    QFETCH(int, overflow);
    QuantSpec spec;
    spec.preset = Preset::Custom;
    spec.target = static_cast<Target>(target);
    spec.scheme = Scheme::PerTensor;
    Convention c;
    c.scaleOp = ScaleOp::Divide;
    c.zeroPoint = ZeroPointStage::BeforeRounding;
    c.overflow = static_cast<Overflow>(overflow);
    spec.custom = c;
    std::vector<float> x;
    for (std::uint64_t u = 0; u < (1ull << 32); u += 4093)
        x.push_back(floatFromBits(static_cast<std::uint32_t>(u)));
    const MiniFloat f = miniFloatOf(spec.target);
    const int codes = f == MiniFloat::E2M1 ? 16 : 256;
    for (int code = 0; code < codes; ++code) {
        const float v = decodeMiniFloat(static_cast<std::uint8_t>(code), f);
        const float next = decodeMiniFloat(static_cast<std::uint8_t>(code + 1), f);
        for (float p : {v, (v + next) / 2, 2 * v - next / 2})
            for (float q : {p, std::nextafter(p, 1e30f), std::nextafter(p, -1e30f)})
                x.push_back(q);
    }
    BackendTask job;
    job.plan = resolveSpec(spec, {static_cast<std::int64_t>(x.size())});
    job.values = x;
    QuantParams params;
    params.scales = {1.0f};
    job.params = params;
    const Codes want = quantizeReference(job.plan, params, x);
    const Codes got = CpuBackend(2).run(job).codes;
    for (std::int64_t i = 0; i < want.size(); ++i)
        if (got.at(i) != want.at(i))
            QFAIL(qPrintable(QStringLiteral("x=%1 (bits %2): got code %3, want %4")
                                 .arg(double(x[static_cast<std::size_t>(i)]), 0, 'g', 9)
                                 .arg(floatBits(x[static_cast<std::size_t>(i)]), 8, 16, QLatin1Char('0'))
                                 .arg(got.at(i))
                                 .arg(want.at(i))));
}

// The vector NVFP4 block-scale kernel against RangeRule::applyBlocks, block for block: for tensor
// scales from subnormal to large, block maxima through a stride of fp32 bit patterns below the
// saturation point, and around every E4M3 code its value, the midpoints to its neighbours and the
// floats either side; NaN-flagged (negated) maxima too. Counts not a multiple of the vector width,
// so the padded tail runs; once in place (maxima in the scale slots), as the backend calls it.
void TestBackendConformance::nvfp4ScalesSweep() {
    QuantSpec spec;
    spec.preset = Preset::NVFP4;
    spec.target = Target::Fp4E2M1;
    spec.scheme = Scheme::Block;
    const ResolvedSpec plan = resolveSpec(spec, {16});
    const auto kernels = cpu::kernelsFor(plan, DType::F32);
    QVERIFY(kernels.nvfp4Scales);
    const RangeRule rule(plan);
    const cpu::QuantArgs e4m3 = cpu::miniFloatArgs(MiniFloat::E4M3FN, Overflow::Saturate);
    for (float tensorScale : {1.0f, 1.0f / 2688.0f, 3.0e-39f, 1.0e-45f, 7.5e4f}) {
        std::vector<float> amax;
        const float top = 2 * 448.0f * 6.0f * tensorScale;
        for (std::uint64_t u = 0; u < floatBits(top); u += 65521)
            amax.push_back(floatFromBits(static_cast<std::uint32_t>(u)));
        for (int code = 0; code < 0x7E; ++code) { // (0x7F is NaN, which no block maximum is)
            const float v =
                decodeMiniFloat(static_cast<std::uint8_t>(code), MiniFloat::E4M3FN) * 6 * tensorScale;
            const float next =
                decodeMiniFloat(static_cast<std::uint8_t>(code + 1), MiniFloat::E4M3FN) * 6 * tensorScale;
            for (float p : {v, (v + next) / 2})
                for (float q : {p, std::nextafter(p, 1e30f), std::nextafter(p, -1e30f)})
                    amax.push_back(std::fabs(q));
        }
        for (std::size_t i = 0, n = amax.size(); i < n; i += 7)
            amax.push_back(-amax[i]); // a block holding a NaN
        amax.push_back(-0.0f);
        if (amax.size() % 16 == 0) amax.push_back(1.0f);
        QuantParams want;
        want.tensorScale = tensorScale;
        want.scales.resize(amax.size());
        want.scaleCodes.resize(amax.size());
        rule.applyBlocks(amax.data(), 0, static_cast<std::int64_t>(amax.size()), want);
        QuantParams got = want;
        got.scales = amax; // in place, as the backend keeps its maxima
        kernels.nvfp4Scales(e4m3, got.scales.data(), static_cast<std::int64_t>(amax.size()), tensorScale,
                            got.scaleCodes.data(), got.scales.data());
        for (std::size_t i = 0; i < amax.size(); ++i)
            if (got.scaleCodes[i] != want.scaleCodes[i] ||
                floatBits(got.scales[i]) != floatBits(want.scales[i]))
                QFAIL(qPrintable(QStringLiteral("tensor scale %1, block maximum %2: got code %3 (scale %4), "
                                                "want %5 (%6)")
                                     .arg(double(tensorScale), 0, 'g', 9)
                                     .arg(double(amax[i]), 0, 'g', 9)
                                     .arg(got.scaleCodes[i])
                                     .arg(double(got.scales[i]), 0, 'g', 9)
                                     .arg(want.scaleCodes[i])
                                     .arg(double(want.scales[i]), 0, 'g', 9)));
    }
}

QTEST_GUILESS_MAIN(TestBackendConformance)
#include "tst_backend_conformance.moc"
