// Backends: cpu must equal cpu-reference bit for bit; timing, progress, cancel and the registry.
#include "backend/registry.h"
#include "base/error.h"
#include "builtin_backends.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_reference_backend.h"
#include "cpu/parallel.h"
#include "quant_test_util.h"

#include <QtTest>
#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>

using namespace ql;

namespace {

std::vector<float> randomValues(std::int64_t n, unsigned seed) {
    std::vector<float> v = qltest::normalValues(n, seed, 2.0f);
    if (n > 10) {
        v[3] = std::numeric_limits<float>::quiet_NaN();
        v[7] = std::numeric_limits<float>::infinity();
        v[9] = 0.0f;
    }
    return v;
}

} // namespace

class TestBackend : public QObject {
    Q_OBJECT
private slots:
    void cpuMatchesReferenceAcrossChunks_data();
    void cpuMatchesReferenceAcrossChunks();
    void explicitParamsAreUsed();
    void timingMedianAndSpread();
    void progressAndCancel();
    void workerFailureReachesCaller();
    void registryOrder();
};

// The conformance grid (tst_backend_conformance) runs every spec at the backends' own chunking; this
// one cuts the work into small chunks on several threads, so chunk edges fall inside rows and groups.
void TestBackend::cpuMatchesReferenceAcrossChunks_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<bool>("symmetric");
    QTest::addColumn<Shape>("shape");
    QTest::addRow("torch/per-channel/int8") << "torch"
                                            << "per-channel"
                                            << "int8" << true << Shape{64, 300};
    QTest::addRow("torch/per-tensor/uint8/asym") << "torch"
                                                 << "per-tensor"
                                                 << "uint8" << false << Shape{1000, 70};
    QTest::addRow("aclnn-quantize/per-channel/int8") << "aclnn-quantize"
                                                     << "per-channel"
                                                     << "int8" << true << Shape{33, 129};
    QTest::addRow("tensorrt/block-1x64/int4") << "tensorrt"
                                              << "block"
                                              << "int4" << true << Shape{16, 256};
    QTest::addRow("ascend-quant/per-tensor/int8") << "ascend-quant"
                                                  << "per-tensor"
                                                  << "int8" << false << Shape{7, 1 << 14};
    QTest::addRow("mx/fp8") << "mx"
                            << "block"
                            << "fp8-e4m3" << true << Shape{40, 96};
    QTest::addRow("nvfp4/fp4") << "nvfp4"
                               << "block"
                               << "fp4-e2m1" << true << Shape{12, 64};
}

void TestBackend::cpuMatchesReferenceAcrossChunks() {
    QFETCH(QString, preset);
    QFETCH(QString, scheme);
    QFETCH(QString, dtype);
    QFETCH(bool, symmetric);
    QFETCH(Shape, shape);
    QuantSpec spec;
    spec.preset = *presetFromName(preset.toStdString());
    spec.scheme = *schemeFromName(scheme.toStdString());
    spec.target = *targetFromName(dtype.toStdString());
    spec.symmetric = symmetric;
    if (!symmetric) spec.calibration.method = CalibMethod::MinMax;
    if (spec.scheme == Scheme::Block && !isBlockFormat(spec.preset)) { // (MX and NVFP4 fix their own)
        spec.axes = {};
        spec.block = {1, 64};
    }
    if (spec.preset == Preset::MX || spec.preset == Preset::NVFP4 || spec.scheme == Scheme::PerTensor)
        spec.axes = {};
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    const auto values = randomValues(elementCount(shape), 11);
    job.values = values;
    const Result ref = CpuReferenceBackend().run(job);
    // Small chunks and several threads, so chunk edges fall inside rows and groups.
    const Result fast = CpuBackend(4, 1000).run(job);
    // Bitwise: an MX block holding NaN has a NaN scale (E8M0 0xFF), and NaN != NaN.
    QCOMPARE(fast.params.scales.size(), ref.params.scales.size());
    QVERIFY(std::memcmp(fast.params.scales.data(), ref.params.scales.data(), ref.params.scales.size() * 4) ==
            0);
    QCOMPARE(fast.params.scaleCodes, ref.params.scaleCodes);
    QCOMPARE(fast.params.zeroPoints, ref.params.zeroPoints);
    QVERIFY(fast.codes == ref.codes);
}

void TestBackend::explicitParamsAreUsed() {
    QuantSpec spec;
    spec.scheme = Scheme::PerTensor;
    spec.axes = {};
    spec.calibration.method = CalibMethod::Explicit;
    BackendTask job;
    job.plan = resolveSpec(spec, {4});
    const std::vector<float> x{0.5f, 1.5f, 2.5f, 300.0f};
    job.values = x;
    job.params = QuantParams{{1.0f}, {}, {}, 0.0f};
    for (const Backend* b :
         std::initializer_list<const Backend*>{new CpuBackend(2, 1), new CpuReferenceBackend}) {
        const Result r = b->run(job);
        QCOMPARE(r.codes.at(0), 0);
        QCOMPARE(r.codes.at(1), 2);
        QCOMPARE(r.codes.at(2), 2);
        QCOMPARE(r.codes.at(3), 127);
        delete b;
    }
    job.params = QuantParams{{-1.0f}, {}, {}, 0.0f}; // torch refuses negative scales
    QVERIFY_THROWS_EXCEPTION(QuantError, CpuBackend().run(job));
    job.values = std::span<const float>(x).first(3);
    QVERIFY_THROWS_EXCEPTION(QuantError, CpuBackend().run(job));
}

void TestBackend::timingMedianAndSpread() {
    const Timing t = Timing::fromRuns({{1, 0, 5, 0, 9}, {2, 0, 1, 0, 3}, {3, 0, 3, 0, 6}});
    QCOMPARE(t.runs, 3);
    QCOMPARE(t.median.kernelMs, 3.0);
    QCOMPARE(t.min.kernelMs, 1.0);
    QCOMPARE(t.max.totalMs, 9.0);
    QCOMPARE(Timing::fromRuns({{0, 0, 1, 0, 1}, {0, 0, 2, 0, 2}}).median.kernelMs, 1.5);
    QCOMPARE(Timing::fromRuns({}).runs, 0);
    QuantSpec spec;
    BackendTask job;
    job.plan = resolveSpec(spec, {8, 8});
    const auto v = randomValues(64, 3);
    job.values = v;
    job.repeat = 5;
    const Result r = CpuBackend().run(job);
    QCOMPARE(r.timing.runs, 5);
    QVERIFY(r.timing.min.totalMs <= r.timing.median.totalMs &&
            r.timing.median.totalMs <= r.timing.max.totalMs);
}

void TestBackend::progressAndCancel() {
    QuantSpec spec;
    BackendTask job;
    job.plan = resolveSpec(spec, {100, 100});
    const auto v = randomValues(10000, 5);
    job.values = v;
    std::vector<double> seen;
    CpuBackend(3, 100).run(job, [&](double d) {
        seen.push_back(d);
        return true;
    });
    QVERIFY(seen.size() >= 2);
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QCOMPARE(seen.back(), 1.0);
    int calls = 0;
    auto stopEarly = [&](double) { return ++calls < 2; }; // the first call inside the kernel says stop
    QVERIFY_THROWS_EXCEPTION(Cancelled, CpuBackend(3, 100).run(job, stopEarly));
    calls = 0;
    QVERIFY_THROWS_EXCEPTION(Cancelled, CpuReferenceBackend().run(job, [&](double) { return ++calls < 2; }));
}

// A chunk that throws on a helper thread must reach the caller as its exception, after every thread
// is joined, and stop the other workers at their next chunk; before, it terminated the process.
void TestBackend::workerFailureReachesCaller() {
    std::atomic<int> ran{0};
    std::vector<std::uint8_t> workersSeen(4, 0);
    try {
        runOnWorkers(4, [&](unsigned w) {
            workersSeen[w] = 1;
            ran.fetch_add(1);
            if (w == 2) throw std::runtime_error("worker 2 failed");
            if (w == 3) throw std::logic_error("worker 3 failed");
        });
        QFAIL("runOnWorkers swallowed a worker's exception");
    } catch (const std::runtime_error& e) {
        QCOMPARE(std::string(e.what()), std::string("worker 2 failed")); // the lowest worker's, every time
    }
    QCOMPARE(ran.load(), 4);
    QCOMPARE(std::count(workersSeen.begin(), workersSeen.end(), 1), 4);

    // The caller's first chunk waits until a helper has thrown, so the helpers must claim chunks.
    using namespace std::chrono_literals;
    constexpr std::int64_t kChunks = 10000;
    std::atomic<std::int64_t> started{0};
    std::atomic<bool> thrown{false};
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, cpu::parallelChunks(
                                                     3, kChunks,
                                                     [&](std::int64_t, unsigned w) {
                                                         started.fetch_add(1);
                                                         if (w != 0) {
                                                             thrown = true;
                                                             throw std::runtime_error("chunk failed");
                                                         }
                                                         while (!thrown.load())
                                                             std::this_thread::yield();
                                                         // (time for the helper's throw to unwind)
                                                         std::this_thread::sleep_for(20ms);
                                                     },
                                                     [](double) { return true; }, 0, 1));
    QVERIFY(started.load() <= 3); // one chunk per worker at most: the rest were never started
}

void TestBackend::registryOrder() {
    BackendRegistry r;
    registerBuiltinBackends(r);
    QVERIFY(r.backends().size() >= 2);
    // CPU backends come last, as the fallback.
    const auto n = r.backends().size();
    QCOMPARE(r.backends()[n - 2]->name(), std::string("cpu"));
    QCOMPARE(r.backends()[n - 1]->name(), std::string("cpu-reference"));
    QVERIFY(r.find("cpu-reference"));
    QVERIFY(!r.find("nope"));
    QVERIFY_THROWS_EXCEPTION(QuantError, r.add(std::make_unique<CpuBackend>()));
    for (const auto& b : r.backends())
        QVERIFY(!b->deviceDescription().empty());
}

QTEST_GUILESS_MAIN(TestBackend)
#include "tst_backend.moc"
