// The cuda backend itself: registration, availability and its reasons on every machine; on a
// machine with an NVIDIA GPU, codes and parameters equal to cpu-reference on every kernel path
// (vector body and scalar tail, f32 / bf16 / f16 input, 1- and 4-byte codes, every mapping rule,
// pinned staging of large tensors), the report's accumulators made on the device equal to the
// oracle's, event timings, progress, cancel and clean-up. Device rows skip
// with the reason when no GPU is present. (tst_backend_conformance runs the full preset grid on it too.)
#include "accumulator_checks.h"
#include "backend/registry.h"
#include "backend_test_util.h"
#include "base/error.h"
#include "builtin_backends.h"
#include "cpu/cpu_reference_backend.h"
#include "cuda/cuda_backend.h"
#include "tensor/float_formats.h"

#include <QtTest>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

using namespace ql;
using namespace qltest;

namespace {

// Restores an environment variable when the test ends, however it ends.
class EnvGuard {
public:
    EnvGuard(const char* name, const QByteArray& value)
        : m_name(name)
        , m_had(qEnvironmentVariableIsSet(name)) {
        m_old = qgetenv(name);
        qputenv(name, value);
    }
    ~EnvGuard() {
        if (m_had)
            qputenv(m_name, m_old);
        else
            qunsetenv(m_name);
    }

private:
    const char* m_name;
    bool m_had;
    QByteArray m_old;
};

BackendTask smallJob() {
    BackendTask job;
    job.plan = resolveSpec(calibratedSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {33, 129});
    job.tensor = tensorOf(conformanceValues(33 * 129, 3), {33, 129}, DType::F32);
    return job;
}

#define SKIP_WITHOUT_DEVICE(backend)                                                                         \
    if (auto why = (backend).unavailableReason()) QSKIP(why->c_str())

} // namespace

class TestCudaBackend : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        // ctest reports the suite as skipped, not passed, on a machine without a usable GPU
        // (tests/cuda.cmake matches this line); the rows that need no device still run.
        if (auto why = CudaBackend().unavailableReason()) qInfo("no CUDA device: %s", why->c_str());
    }
    void init() { qunsetenv("QUANTLENS_CUDA_DEVICE"); }
    void registeredBetweenAscendAndCpu();
    void availabilityIsExplained();
    void badDeviceNumbers_data();
    void badDeviceNumbers();
    void unavailableRefusesToRun();
    void matchesReference_data();
    void matchesReference();
    void statisticsWithClippingAndKeptRows_data();
    void statisticsWithClippingAndKeptRows();
    void explicitParamsAndBadParams();
    void eventTimingsAndRepeats();
    void progressCancelAndCleanUp();
    void emptyTensor();
    void contextKeptAcrossJobs();
    void concurrentJobsShareTheDevice();
};

void TestCudaBackend::registeredBetweenAscendAndCpu() {
    BackendRegistry registry;
    registerBuiltinBackends(registry);
    std::vector<std::string> names;
    for (const auto& b : registry.backends())
        names.push_back(b->name());
    const auto at = [&](const char* n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
    QVERIFY(registry.find("cuda"));
    QVERIFY(at("ascend") < at("cuda"));
    QVERIFY(at("cuda") < at("cpu"));
    QVERIFY(at("cpu") < at("cpu-reference"));
}

// Either a GPU is there and described (name, device number, sm_XY, memory), or the reason says
// which of driver / device / kernel image is missing; both answers stay the same on a second ask.
void TestCudaBackend::availabilityIsExplained() {
    const CudaBackend backend;
    const auto why = backend.unavailableReason();
    const QString description = QString::fromStdString(backend.deviceDescription());
    qInfo("cuda: %s", why ? why->c_str() : qPrintable(description));
    QCOMPARE(CudaBackend().unavailableReason(), why);
    if (why) {
        const bool noDevice = why->rfind("no CUDA device: ", 0) == 0;
        QVERIFY2(noDevice || why->find("cannot run this build's kernels") != std::string::npos, why->c_str());
        QCOMPARE(description, QStringLiteral("NVIDIA GPU (not available)"));
    } else {
        QVERIFY2(description.contains(QLatin1String("(device 0, sm_")), qPrintable(description));
        QVERIFY2(description.contains(QLatin1String("GiB)")), qPrintable(description));
    }
}

void TestCudaBackend::badDeviceNumbers_data() {
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("reason");
    const QString bad = QStringLiteral("QUANTLENS_CUDA_DEVICE=%1 is not a device number");
    QTest::addRow("not-a-number") << QByteArray("gpu1") << bad.arg(QLatin1String("gpu1"));
    QTest::addRow("negative") << QByteArray("-1") << bad.arg(QLatin1String("-1"));
    QTest::addRow("trailing-text") << QByteArray("0x") << bad.arg(QLatin1String("0x"));
    // A number no machine has: "does not exist" with a GPU, the no-device reason without one.
    QTest::addRow("absent") << QByteArray("999") << QString();
}

void TestCudaBackend::badDeviceNumbers() {
    QFETCH(QByteArray, value);
    QFETCH(QString, reason);
    const EnvGuard env("QUANTLENS_CUDA_DEVICE", value);
    const CudaBackend backend;
    const auto why = backend.unavailableReason();
    QVERIFY(why);
    if (!reason.isEmpty()) {
        QCOMPARE(QString::fromStdString(*why), reason);
    } else {
        const bool noDevice = why->rfind("no CUDA device: ", 0) == 0;
        QVERIFY2(noDevice ||
                     why->rfind("device 999 (QUANTLENS_CUDA_DEVICE) does not exist: CUDA finds ", 0) == 0,
                 why->c_str());
    }
    QCOMPARE(backend.supports(smallJob().plan), why);
}

void TestCudaBackend::unavailableRefusesToRun() {
    const EnvGuard env("QUANTLENS_CUDA_DEVICE", "nope");
    const CudaBackend backend;
    try {
        backend.run(smallJob());
        QFAIL("run() on an unavailable backend returned");
    } catch (const QuantError& e) {
        QCOMPARE(QString::fromUtf8(e.what()),
                 QStringLiteral("cuda: QUANTLENS_CUDA_DEVICE=nope is not a device number"));
    }
}

void TestCudaBackend::matchesReference_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("dtype");
    using P = Preset;
    using T = Target;
    using S = Scheme;
    QuantSpec pg = calibratedSpec(P::Custom, T::Int4, S::PerGroup, {-1});
    pg.groupSize = 128;
    Convention divide;
    divide.scaleOp = ScaleOp::Divide;
    divide.zeroPoint = ZeroPointStage::BeforeRounding;
    pg.custom = divide;
    QuantSpec ragged = calibratedSpec(P::NpuGroupQuant, T::Int8, S::Ragged, {});
    ragged.groupEnds = {0, 100, 100, 257, 301};
    QuantSpec raggedLast = calibratedSpec(P::Custom, T::UInt8, S::Ragged, {-1}, false);
    raggedLast.groupEnds = {0, 7, 7, 300, 1031};
    QuantSpec percentile = calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0});
    percentile.calibration.method = CalibMethod::Percentile;
    percentile.calibration.percentile = 99.9;
    QuantSpec sqrt = calibratedSpec(P::AscendQuant, T::Int8, S::PerChannel, {-1});
    sqrt.sqrtMode = true;
    const struct {
        const char* name;
        QuantSpec spec;
        Shape shape;
    } rows[] = {
        // 64 MB of f32 (32 MB of bf16 / f16) input: staged upload; 16 MB of codes: direct download.
        {"torch/per-tensor/int8", calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}), {4096, 4096}},
        {"torch/per-channel0/uint8-asym",
         calibratedSpec(P::Torch, T::UInt8, S::PerChannel, {0}, false),
         {33, 129}},
        // 34 MB of int32 codes: staged download; f32 input staged too, 16-bit input not.
        {"torch/per-channel-last/int32",
         calibratedSpec(P::Torch, T::Int32, S::PerChannel, {-1}),
         {2048, 4097}},
        // 5 pinned chunks of f32 over the copy workers (one takes two); 16-bit input not staged.
        {"torch/per-tensor/int8-odd-chunks",
         calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}),
         {4099, 2051}},
        {"torch/per-channel0/int8-percentile", percentile, {2048, 4100}},
        {"torch/per-channel-middle/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {1}), {3, 5, 67}},
        {"tensorrt/per-tensor/fp8", calibratedSpec(P::TensorRT, T::Fp8E4M3, S::PerTensor, {}), {1, 1031}},
        {"custom/per-group-g128/int4-divide", pg, {64, 1000}},
        {"ascend-quant/sqrt-mode/int8", sqrt, {7, 17}},
        {"npu-group-quant/ragged-rows/int8", ragged, {301, 64}},
        {"custom/ragged-columns/uint8-asym", raggedLast, {9, 1031}},
        {"mx/fp4", calibratedSpec(P::MX, T::Fp4E2M1, S::Block, {}), {40, 100}},
        {"nvfp4/fp4", calibratedSpec(P::NVFP4, T::Fp4E2M1, S::Block, {}), {12, 64}},
        {"scalar", calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}), {}},
    };
    for (const auto& r : rows)
        for (DType dt : {DType::F32, DType::BF16, DType::F16})
            QTest::addRow("%s/%s/%s", r.name, toString(r.shape).c_str(), std::string(nameOf(dt)).c_str())
                << r.spec << r.shape << int(dt);
}

void TestCudaBackend::matchesReference() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(int, dtype);
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    job.tensor = tensorOf(conformanceValues(elementCount(shape), 9), shape, static_cast<DType>(dtype));
    job.statistics = StatisticsRequest{};
    QVERIFY(!backend.supports(job.plan));
    const Result want = CpuReferenceBackend().run(job);
    const Result got = backend.run(job);
    QCOMPARE(got.params.scales.size(), want.params.scales.size());
    QVERIFY(std::memcmp(got.params.scales.data(), want.params.scales.data(), want.params.scales.size() * 4) ==
            0);
    QCOMPARE(got.params.zeroPoints, want.params.zeroPoints);
    QCOMPARE(got.params.scaleCodes, want.params.scaleCodes);
    QCOMPARE(std::bit_cast<std::uint32_t>(got.params.tensorScale),
             std::bit_cast<std::uint32_t>(want.params.tensorScale));
    QVERIFY(got.statistics && want.statistics);
    compareAccumulators(*got.statistics, *want.statistics);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(got.codes.target(), want.codes.target());
    QCOMPARE(got.codes.size(), want.codes.size());
    for (std::int64_t i = 0; i < want.codes.size(); ++i)
        if (got.codes.at(i) != want.codes.at(i))
            QFAIL(qPrintable(QStringLiteral("element %1: got %2, reference %3")
                                 .arg(i)
                                 .arg(got.codes.at(i))
                                 .arg(want.codes.at(i))));
}

void TestCudaBackend::statisticsWithClippingAndKeptRows_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("rows");
    using P = Preset;
    using T = Target;
    using S = Scheme;
    QuantSpec g128 = calibratedSpec(P::Custom, T::Int4, S::PerGroup, {-1});
    g128.groupSize = 128;
    const struct {
        const char* name;
        QuantSpec spec;
    } specs[] = {
        {"torch/per-channel0/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0})},
        {"torch/per-channel-last/int8", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {-1})},
        {"torch/per-tensor/uint8-asym", calibratedSpec(P::Torch, T::UInt8, S::PerTensor, {}, false)},
        {"ascend-quant/per-channel-last/int8-asym",
         calibratedSpec(P::AscendQuant, T::Int8, S::PerChannel, {-1}, false)},
        {"custom/per-group-g128/int4", g128},
        {"tensorrt/per-tensor/fp8", calibratedSpec(P::TensorRT, T::Fp8E4M3, S::PerTensor, {})},
        {"mx/fp4", calibratedSpec(P::MX, T::Fp4E2M1, S::Block, {})},
        {"nvfp4/fp4", calibratedSpec(P::NVFP4, T::Fp4E2M1, S::Block, {})},
    };
    for (const auto& r : specs)
        for (DType dt : {DType::F32, DType::BF16})
            for (int rows : {-1, 5})
                QTest::addRow("%s/%s/rows-%d", r.name, std::string(nameOf(dt)).c_str(), rows)
                    << r.spec << int(dt) << rows;
}

// Parameters from the clean values only, so the outliers clip; NaN and ±Inf among the values; every
// clipping row kept, or only the first five (a whole-model run's report keeps a few).
void TestCudaBackend::statisticsWithClippingAndKeptRows() {
    QFETCH(QuantSpec, spec);
    QFETCH(int, dtype);
    QFETCH(int, rows);
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    const Shape shape{257, 384};
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    std::vector<float> values = conformanceValues(elementCount(shape), 21);
    for (std::size_t i = 0; i < values.size(); i += 29)
        values[i] *= 50.0f;
    values[7] = std::numeric_limits<float>::quiet_NaN();
    values[1000] = std::numeric_limits<float>::infinity();
    values[2001] = -std::numeric_limits<float>::infinity();
    job.tensor = tensorOf(values, shape, static_cast<DType>(dtype));
    BackendTask clean = job;
    std::vector<float> cleanValues = job.tensor.toFloatVector();
    for (std::size_t i = 0; i < cleanValues.size(); ++i) // the outliers and the specials' huge values out
        if (i % 29 == 0 || !std::isfinite(cleanValues[i]) || std::fabs(cleanValues[i]) > 8.0f)
            cleanValues[i] = 0.25f;
    clean.tensor = tensorOf(cleanValues, shape, DType::F32);
    job.params = CpuReferenceBackend().run(clean).params;
    job.statistics = StatisticsRequest{};
    if (rows >= 0) job.statistics->options.groupRows = static_cast<std::size_t>(rows);
    const Result want = CpuReferenceBackend().run(job);
    const Result got = backend.run(job);
    QVERIFY(want.statistics && got.statistics);
    const GroupClipping total = want.statistics->analysis.clipping.total();
    QVERIFY(total.clippedLow + total.clippedHigh > 0);
    compareAccumulators(*got.statistics, *want.statistics);
}

// Given parameters are used as given (one scalar offset included); ones the oracle refuses are
// refused before the device is touched, with checkParams' message.
void TestCudaBackend::explicitParamsAndBadParams() {
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    QuantSpec spec = calibratedSpec(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {});
    spec.groupEnds = {3, 8};
    spec.symmetric = false;
    BackendTask job;
    job.plan = resolveSpec(spec, {8, 40});
    const auto values = conformanceValues(8 * 40, 4);
    job.values = values;
    QuantParams p;
    p.scales.assign(80, 0.75f);
    p.zeroPoints = {-1.5f};
    job.params = p;
    const Result got = backend.run(job);
    QCOMPARE(got.params.scales, p.scales);
    QCOMPARE(got.codes, CpuReferenceBackend().run(job).codes);
    p.scales.pop_back();
    job.params = p;
    try {
        backend.run(job);
        QFAIL("a wrong scale count was accepted");
    } catch (const QuantError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).startsWith(QLatin1String("expected 80 scales")), e.what());
    }
}

void TestCudaBackend::eventTimingsAndRepeats() {
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    BackendTask job;
    job.plan =
        resolveSpec(calibratedSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {4096, 2048});
    job.tensor = tensorOf(conformanceValues(4096 * 2048, 5), {4096, 2048}, DType::F32);
    job.repeat = 3;
    const Result r = backend.run(job);
    QCOMPARE(r.timing.runs, 3);
    const PhaseTimes& m = r.timing.median;
    QVERIFY(m.uploadMs > 0 && m.kernelMs > 0 && m.downloadMs > 0 && m.prepareMs > 0);
    // The calibration (prepare) runs during the upload; the rest are disjoint parts of the run.
    QVERIFY2(std::max(m.prepareMs, m.uploadMs) + m.kernelMs + m.downloadMs <= m.totalMs * 1.05 + 0.1,
             qPrintable(QStringLiteral("max(%1, %2) + %3 + %4 > %5")
                            .arg(m.prepareMs)
                            .arg(m.uploadMs)
                            .arg(m.kernelMs)
                            .arg(m.downloadMs)
                            .arg(m.totalMs)));
    QVERIFY(r.timing.min.kernelMs <= m.kernelMs && m.kernelMs <= r.timing.max.kernelMs);
}

// Progress rises to 1 through every phase of every run; a cancel at any point throws Cancelled
// and leaves the backend usable (each run releases its stream, events and buffers).
void TestCudaBackend::progressCancelAndCleanUp() {
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    BackendTask job = smallJob();
    job.repeat = 2;
    std::vector<double> seen;
    backend.run(job, [&](double d) {
        seen.push_back(d);
        return true;
    });
    QVERIFY(seen.size() >= 8); // start, 3 phases and the end of each run
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QCOMPARE(seen.front(), 0.0);
    QCOMPARE(seen.back(), 1.0);
    for (std::size_t stopAt = 0; stopAt < seen.size(); ++stopAt) {
        std::size_t calls = 0;
        QVERIFY_THROWS_EXCEPTION(Cancelled, backend.run(job, [&](double) { return calls++ < stopAt; }));
    }
    for (int i = 0; i < 50; ++i) // leaks would show as an allocation failure long before this ends
        QVERIFY_THROWS_EXCEPTION(Cancelled, backend.run(job, [&](double d) { return d < 0.2; }));
    QCOMPARE(backend.run(job).codes, CpuReferenceBackend().run(job).codes);
}

void TestCudaBackend::emptyTensor() {
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    BackendTask job;
    job.plan = resolveSpec(calibratedSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {4, 0});
    job.tensor = Tensor(DType::F32, {4, 0});
    const Result r = backend.run(job);
    QCOMPARE(r.codes.size(), 0);
    QCOMPARE(r.params.scales.size(), std::size_t{4});
}

// The stream, buffers and pinned chunks live across jobs: a smaller job after a large one allocates
// nothing, a refused job (bad parameters, refused before any device work) keeps them, and the
// results stay the oracle's throughout.
void TestCudaBackend::contextKeptAcrossJobs() {
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    QCOMPARE(backend.deviceBytesHeld(), std::size_t{0});
    BackendTask large;
    large.plan =
        resolveSpec(calibratedSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {4096, 2304});
    large.tensor = tensorOf(conformanceValues(4096 * 2304, 6), {4096, 2304}, DType::F32); // staged: 36 MB
    const CpuReferenceBackend reference;
    QCOMPARE(backend.run(large).codes, reference.run(large).codes);
    const std::size_t held = backend.deviceBytesHeld();
    QVERIFY2(held >= std::size_t{4096} * 2304 * 5, qPrintable(QString::number(held)));
    const BackendTask small = smallJob();
    QCOMPARE(backend.run(small).codes, reference.run(small).codes);
    QCOMPARE(backend.deviceBytesHeld(), held);
    BackendTask refused = large;
    QuantParams bad;
    bad.scales.assign(4095, 1.0f); // one short
    refused.params = bad;
    QVERIFY_THROWS_EXCEPTION(QuantError, backend.run(refused));
    QCOMPARE(backend.deviceBytesHeld(), held);
    QCOMPARE(backend.run(large).codes, reference.run(large).codes);
}

// Jobs from several threads take turns on the one device context; each gets its own answer.
void TestCudaBackend::concurrentJobsShareTheDevice() {
    const CudaBackend backend;
    SKIP_WITHOUT_DEVICE(backend);
    std::vector<BackendTask> jobs(4);
    std::vector<Codes> want(jobs.size()), got(jobs.size());
    std::vector<std::string> errors(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const Shape shape{static_cast<std::int64_t>(1024 + 512 * i), 4096};
        jobs[i].plan =
            resolveSpec(calibratedSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), shape);
        jobs[i].tensor = tensorOf(conformanceValues(elementCount(shape), 20 + static_cast<int>(i)), shape,
                                  i % 2 ? DType::BF16 : DType::F32);
        want[i] = CpuReferenceBackend().run(jobs[i]).codes;
    }
    {
        std::vector<std::jthread> threads;
        for (std::size_t i = 0; i < jobs.size(); ++i)
            threads.emplace_back([&, i] {
                try {
                    got[i] = backend.run(jobs[i]).codes;
                } catch (const std::exception& e) {
                    errors[i] = e.what();
                }
            });
    }
    for (std::size_t i = 0; i < jobs.size(); ++i)
        QVERIFY2(errors[i].empty() && got[i] == want[i],
                 qPrintable(QStringLiteral("job %1: %2").arg(i).arg(QString::fromStdString(errors[i]))));
}

QTEST_GUILESS_MAIN(TestCudaBackend)
#include "tst_cuda_backend.moc"
