// The ascend backend against the CANN stand-in (tests/ascend_standin): conformance with
// cpu-reference code by code, the ABI it speaks (shapes, strides, dtype and format codes,
// workspace protocol), error propagation with full clean-up, and why it is unavailable.
#include "accumulator_checks.h"
#include "ascend/ascend_backend.h"
#include "ascend/ascend_guards.h"
#include "ascend/ascend_registration.h"
#include "ascend_standin/ascend_test_util.h"
#include "ascend_standin/standin_hooks.h"
#include "cpu/cpu_reference_backend.h"
#include "quant_test_util.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace ql;
using namespace qltest;

class TestAscendBackend : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void conformance_data();
    void conformance();
    void specVectors_data();
    void specVectors();
    void abiCodes_data();
    void abiCodes();
    void callSequenceAndWorkspace();
    void errorsReleaseEverything_data();
    void errorsReleaseEverything();
    void timingProgressAndCancel();
    void unsupportedSpecs_data();
    void unsupportedSpecs();
    void unavailableWithoutLibraries();
    void defaultSearchFindsNothingHere();
    void missingEntryPointIsNamed();
    void standInIsNeverADevice();
    void noDevice();
    void registration();

private:
    qltest::StandInHooks m_hooks;
};

void TestAscendBackend::initTestCase() {
    // Also when run by hand, not only through ctest's ENVIRONMENT.
    qputenv("QUANTLENS_ASCEND_LIB_DIR", QByteArray(QL_STANDIN_DIR));
    qputenv("QUANTLENS_ASCEND_ALLOW_STANDIN", QByteArray("1"));
    qunsetenv("QUANTLENS_ASCEND_DEVICE");
    qunsetenv("QL_STANDIN_FAIL");
    const AscendBackend backend;
    QVERIFY2(!backend.unavailableReason(), backend.unavailableReason().value_or("").c_str());
    m_hooks = qltest::StandInHooks::load(QL_STANDIN_DIR);
}

void TestAscendBackend::init() {
    m_hooks.reset();
}

// ---- conformance: every supported preset x dtype x layout x odd/even shape, zero mismatches ----

void TestAscendBackend::conformance_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    const QString q = QStringLiteral("aclnn-quantize"), a = QStringLiteral("ascend-quant");
    const QString pt = QStringLiteral("per-tensor"), pc = QStringLiteral("per-channel");
    for (const char* dt : {"int8", "uint8", "int32"})
        for (const Shape& shape : {Shape{7, 13}, Shape{8, 16}, Shape{3, 5, 6}, Shape{11}})
            for (bool sym : {true, false})
                for (int axis : {-2, 0, -1}) {
                    const QString scheme = axis == -2 ? pt : pc;
                    if (axis == -1 && shape.size() == 1) continue;
                    QTest::addRow("aclnn-quantize/%s/%s/%s/%s", dt,
                                  qPrintable(scheme + QString::number(axis)), toString(shape).c_str(),
                                  sym ? "sym" : "asym")
                        << makeSpec(q, QLatin1String(dt), scheme, axis, sym) << shape;
                }
    for (const char* dt : {"int8", "int4", "int32"})
        for (const Shape& shape : {Shape{5, 16}, Shape{6, 24}, Shape{3, 4, 8}, Shape{16}})
            for (int axis : {-3, -1, -2})
                for (const char* round : {"half-even", "floor", "ceil", "trunc"})
                    for (int variant = 0; variant < 3; ++variant) { // 0 plain, 1 sqrt mode, 2 offset
                        if (axis == -2 && shape.size() == 1) continue;
                        const QString scheme = axis == -3 ? pt : pc;
                        QuantSpec s = makeSpec(a, QLatin1String(dt), scheme, axis, variant != 2);
                        s.rounding = roundingFromName(round);
                        s.sqrtMode = variant == 1;
                        QTest::addRow("ascend-quant/%s/%s/%s/%s/%s", dt,
                                      qPrintable(scheme + QString::number(axis)), toString(shape).c_str(),
                                      round,
                                      variant == 0   ? "plain"
                                      : variant == 1 ? "sqrt"
                                                     : "offset")
                            << s << shape;
                    }
    // Odd/even ragged groups; {3,3,7} has an empty group, {0,...} an empty first one.
    for (const char* dt : {"int8", "int4", "int32"})
        for (const auto& ends : {std::vector<std::int64_t>{3, 3, 7}, std::vector<std::int64_t>{7},
                                 std::vector<std::int64_t>{0, 2, 5, 7}})
            for (std::int64_t h : {8, 24})
                for (bool sym : {true, false}) {
                    QuantSpec s = makeSpec(QStringLiteral("npu-group-quant"), QLatin1String(dt),
                                           QStringLiteral("ragged"), 0, sym);
                    s.groupEnds = ends;
                    QTest::addRow("npu-group-quant/%s/groups%d/H%d/%s", dt, int(ends.size()), int(h),
                                  sym ? "sym" : "offset")
                        << s << Shape{7, h};
                }
}

void TestAscendBackend::conformance() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    const auto values = sampleValues(elementCount(shape), 7u + static_cast<unsigned>(shape.size()));
    job.values = values;
    supplyGroupOffset(job, values);
    const AscendBackend ascend;
    QVERIFY2(!ascend.supports(job.plan), ascend.supports(job.plan).value_or("").c_str());
    std::vector<float> importance;
    job.statistics = everyStatistic(shape, importance); // the host accumulate() over the device's codes
    const Result ref = CpuReferenceBackend().run(job);
    const Result dev = ascend.run(job);
    QCOMPARE(dev.params.scales, ref.params.scales);
    QCOMPARE(dev.params.zeroPoints, ref.params.zeroPoints);
    QCOMPARE(dev.codes.target(), ref.codes.target());
    QCOMPARE(dev.codes.size(), ref.codes.size());
    std::int64_t mismatches = 0;
    const std::string first = firstMismatch(dev.codes, ref.codes, mismatches);
    QVERIFY2(mismatches == 0, (std::to_string(mismatches) + " mismatched codes, first at " + first).c_str());
    QVERIFY2(dev.statistics && ref.statistics, "a job asking for statistics got none");
    compareAccumulators(*dev.statistics, *ref.statistics);
    QVERIFY2(m_hooks.leaks().empty(), m_hooks.leaks().c_str());
}

// ---- the spec's own vectors (spec §7.3-§7.4), explicit parameters ----

void TestAscendBackend::specVectors_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<std::vector<float>>("x");
    QTest::addColumn<std::vector<float>>("scales");
    QTest::addColumn<std::vector<float>>("zps");
    QTest::addColumn<std::vector<int>>("expected");
    using qltest::bits;
    auto spec = [](Preset p, Target t, Scheme s, std::vector<int> axes = {}, bool sym = true) {
        return qltest::spec(p, t, s, std::move(axes), sym);
    };
    QTest::addRow("V-A1/aclnn-quantize/int32/zp")
        << spec(Preset::AclnnQuantize, Target::Int32, Scheme::PerChannel, {1}, false) << Shape{4, 2}
        << std::vector<float>{0.3382f, -0.0919f, 0.7564f, 0.0234f, 3.1024f, 1.0761f, 0.4228f, 1.4621f}
        << std::vector<float>{1, -3} << std::vector<float>{2, 10}
        << std::vector<int>{2, 10, 3, 10, 5, 10, 2, 10};
    QTest::addRow("V-A2/aclnn-quantize/int8")
        << spec(Preset::AclnnQuantize, Target::Int8, Scheme::PerTensor) << Shape{5}
        << std::vector<float>{1, 3, 5, -1, -3} << std::vector<float>{2} << std::vector<float>{}
        << std::vector<int>{0, 2, 2, 0, -2};
    QTest::addRow("V-A3/aclnn-quantize/true-division")
        << spec(Preset::AclnnQuantize, Target::UInt8, Scheme::PerTensor, {}, false) << Shape{1}
        << std::vector<float>{bits(0x3E8C41DB)} << std::vector<float>{bits(0x3B0CCEAA)}
        << std::vector<float>{0} << std::vector<int>{127};
    const std::vector<float> a4{2.5f, -2.5f, 2.7f, -2.7f, 0.5f, -0.5f, 200, -200};
    const std::pair<const char*, std::vector<int>> modes[] = {{"half-even", {2, -2, 3, -3, 0, 0, 127, -128}},
                                                              {"floor", {2, -3, 2, -3, 0, -1, 127, -128}},
                                                              {"ceil", {3, -2, 3, -2, 1, 0, 127, -128}},
                                                              {"trunc", {2, -2, 2, -2, 0, 0, 127, -128}}};
    for (const auto& [mode, expected] : modes) {
        QuantSpec s = spec(Preset::AscendQuant, Target::Int8, Scheme::PerTensor);
        s.rounding = roundingFromName(mode);
        QTest::addRow("V-A4/ascend-quant/%s", mode)
            << s << Shape{8} << a4 << std::vector<float>{1} << std::vector<float>{} << expected;
    }
    QuantSpec sq = spec(Preset::AscendQuant, Target::Int8, Scheme::PerTensor);
    sq.sqrtMode = true;
    QTest::addRow("V-A5/ascend-quant/sqrt")
        << sq << Shape{1} << std::vector<float>{3.0f} << std::vector<float>{1.5f} << std::vector<float>{}
        << std::vector<int>{7};
    QTest::addRow("V-A6/ascend-quant/sqrt-order")
        << sq << Shape{1} << std::vector<float>{bits(0x42197678)} << std::vector<float>{bits(0x3FE3C928)}
        << std::vector<float>{} << std::vector<int>{121};
    QTest::addRow("V-A7/ascend-quant/int4")
        << spec(Preset::AscendQuant, Target::Int4, Scheme::PerTensor) << Shape{8}
        << std::vector<float>{0.5f, 1.5f, 7.4f, 7.6f, -8.6f, -3.5f, 2.5f, 9} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{0, 2, 7, 7, -8, -4, 2, 7};
    QTest::addRow("V-A8/ascend-quant/int32-packed")
        << spec(Preset::AscendQuant, Target::Int32, Scheme::PerTensor) << Shape{2, 8}
        << std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7, -8} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7, -8};
    QuantSpec g = spec(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {}, false);
    g.groupEnds = {1, 4, 6, 6};
    QTest::addRow("V-G1/npu-group-quant/doc")
        << g << Shape{6, 4}
        << std::vector<float>{1.0029f,  -1.2373f, 1.0107f,  -0.2681f, 0.5791f, 0.1101f, 1.0059f, -0.9658f,
                              -1.7637f, 1.7588f,  -1.3193f, 0.3989f,  1.3262f, 0.4854f, 1.9551f, 0.9697f,
                              -0.8770f, -1.8828f, 2.1777f,  -0.0050f, 0.4722f, 0.5605f, 0.8267f, -0.9810f}
        << std::vector<float>{-0.2710f, -0.9381f, 0.2850f,  -1.1230f, 0.5217f,  -0.7233f, -0.1730f, -0.1245f,
                              -1.5433f, -0.9129f, -2.2095f, 1.7371f,  -0.8253f, 0.3973f,  0.1430f,  0.3885f}
        << std::vector<float>{-1.1658f} << std::vector<int>{-1, 0,  -1, -1, -1, -1, -1, -1, -2, -2, -1, -1,
                                                            0,  -2, -2, -1, 0,  1,  -6, -1, -2, -2, -3, -3};
}

void TestAscendBackend::specVectors() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(std::vector<float>, x);
    QFETCH(std::vector<float>, scales);
    QFETCH(std::vector<float>, zps);
    QFETCH(std::vector<int>, expected);
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    job.values = x;
    job.params = QuantParams{scales, zps, {}, 0.0f};
    const Result r = AscendBackend().run(job);
    QCOMPARE(qltest::toInts(r.codes), expected);
    QCOMPARE(qltest::toInts(r.codes), qltest::toInts(CpuReferenceBackend().run(job).codes));
}

// ---- the ABI: tensor descriptors and attributes exactly as CANN's headers declare them ----

void TestAscendBackend::abiCodes_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<QStringList>("expected"); // log lines, in order
    const QString prefix = QStringLiteral("aclCreateTensor ");
    const QString tail = QStringLiteral(" offset=0 format=2 ");
    auto tensor = [&](const char* dims, int dtype, const char* strides) -> QString {
        return prefix + QLatin1String("dims=") + QLatin1String(dims) + QLatin1String(" dtype=") +
               QString::number(dtype) + QLatin1String(" strides=") + QLatin1String(strides) + tail +
               QLatin1String("storage=") + QLatin1String(dims) + QLatin1String(" data=device");
    };
    QuantSpec q = makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("uint8"),
                           QStringLiteral("per-channel"), 1, false);
    QTest::addRow("aclnnQuantize/uint8/axis1/zp")
        << q << Shape{4, 6}
        << QStringList{tensor("[4,6]", 0, "[6,1]"), tensor("[6]", 0, "[1]"), tensor("[6]", 3, "[1]"),
                       tensor("[4,6]", 4, "[6,1]"),
                       QStringLiteral("aclnnQuantizeGetWorkspaceSize dtype=4 axis=1 zeroPoints=yes")};
    q = makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int32"), QStringLiteral("per-tensor"), 0,
                 true);
    QTest::addRow("aclnnQuantize/int32/per-tensor/3d")
        << q << Shape{2, 3, 5}
        << QStringList{tensor("[2,3,5]", 0, "[15,5,1]"), tensor("[1]", 0, "[1]"),
                       tensor("[2,3,5]", 3, "[15,5,1]"),
                       QStringLiteral("aclnnQuantizeGetWorkspaceSize dtype=3 axis=-1 zeroPoints=no")};
    QuantSpec a = makeSpec(QStringLiteral("ascend-quant"), QStringLiteral("int32"),
                           QStringLiteral("per-channel"), 1, true);
    a.sqrtMode = true;
    a.rounding = Rounding::Floor;
    QTest::addRow("aclnnAscendQuantV3/int32-packed/sqrt/floor")
        << a << Shape{3, 16}
        << QStringList{tensor("[3,16]", 0, "[16,1]"), tensor("[16]", 0, "[1]"), tensor("[3,2]", 3, "[2,1]"),
                       QStringLiteral("aclnnAscendQuantV3GetWorkspaceSize sqrtMode=1 roundMode=floor "
                                      "dstType=3 axis=-1 offset=no")};
    a = makeSpec(QStringLiteral("ascend-quant"), QStringLiteral("int4"), QStringLiteral("per-channel"), 0,
                 false);
    a.rounding = Rounding::Trunc;
    QTest::addRow("aclnnAscendQuantV3/int4/axis-2/offset")
        << a << Shape{5, 4}
        << QStringList{tensor("[5,4]", 0, "[4,1]"), tensor("[5]", 0, "[1]"), tensor("[5]", 0, "[1]"),
                       tensor("[5,4]", 29, "[4,1]"),
                       QStringLiteral("aclnnAscendQuantV3GetWorkspaceSize sqrtMode=0 roundMode=trunc "
                                      "dstType=29 axis=-2 offset=yes")};
    QuantSpec g = makeSpec(QStringLiteral("npu-group-quant"), QStringLiteral("int8"),
                           QStringLiteral("ragged"), 0, false);
    g.groupEnds = {2, 2, 5};
    QTest::addRow("aclnnGroupQuant/int8/offset")
        << g << Shape{5, 16}
        << QStringList{tensor("[5,16]", 0, "[16,1]"),
                       tensor("[3,16]", 0, "[16,1]"),
                       tensor("[3]", 9, "[1]"),
                       tensor("[1]", 0, "[1]"),
                       tensor("[5,16]", 2, "[16,1]"),
                       QStringLiteral("aclnnGroupQuantGetWorkspaceSize dstType=2 offset=yes")};
    g.symmetric = true;
    g.calibration.method = CalibMethod::AbsMax;
    g.target = Target::Int32;
    QTest::addRow("aclnnGroupQuant/int32-packed")
        << g << Shape{5, 16}
        << QStringList{tensor("[5,16]", 0, "[16,1]"), tensor("[3,16]", 0, "[16,1]"), tensor("[3]", 9, "[1]"),
                       tensor("[5,2]", 3, "[2,1]"),
                       QStringLiteral("aclnnGroupQuantGetWorkspaceSize dstType=3 offset=no")};
}

void TestAscendBackend::abiCodes() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(QStringList, expected);
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    const auto values = sampleValues(elementCount(shape), 3);
    job.values = values;
    supplyGroupOffset(job, values);
    AscendBackend().run(job);
    QStringList calls;
    for (const QString& line : QString::fromUtf8(m_hooks.log()).split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("aclCreateTensor")) ||
            line.contains(QLatin1String("GetWorkspaceSize")))
            calls << line;
    QCOMPARE(calls, expected);
}

void TestAscendBackend::callSequenceAndWorkspace() {
    QuantSpec s = makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int8"),
                           QStringLiteral("per-tensor"), 0, true);
    BackendTask job;
    job.plan = resolveSpec(s, {4, 6});
    const auto values = sampleValues(24, 5);
    job.values = values;
    const AscendBackend backend;
    QVERIFY(!backend.unavailableReason()); // probe the device before the log is looked at
    for (std::uint64_t ws : {std::uint64_t{4096}, std::uint64_t{0}}) {
        m_hooks.reset();
        m_hooks.setWorkspaceSize(ws);
        backend.run(job);
        QStringList names;
        for (const QString& line :
             QString::fromUtf8(m_hooks.log()).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            names << line;
        const QStringList expected{
            QStringLiteral("aclrtSetDevice 0"),
            QStringLiteral("aclrtCreateStream"),
            QStringLiteral("aclrtMalloc 96 policy=0"),
            QStringLiteral("aclrtMalloc 4 policy=0"),
            QStringLiteral("aclrtMalloc 24 policy=0"),
            QStringLiteral("aclrtMemcpy kind=1 count=96 destMax=96"),
            QStringLiteral("aclrtMemcpy kind=1 count=4 destMax=4"),
            names.value(7),
            names.value(8),
            names.value(9), // the three tensors (abiCodes checks them)
            QStringLiteral("aclnnQuantizeGetWorkspaceSize dtype=2 axis=-1 zeroPoints=no")};
        QCOMPARE(names.mid(0, expected.size()), expected);
        QStringList rest = names.mid(expected.size());
        QStringList tailExpected;
        if (ws) tailExpected << QStringLiteral("aclrtMalloc 4096 policy=0");
        tailExpected << QStringLiteral("aclnnQuantize workspace=") + QString::number(ws)
                     << QStringLiteral("aclrtSynchronizeStream")
                     << QStringLiteral("aclrtMemcpy kind=2 count=24 destMax=24");
        if (ws) tailExpected << QStringLiteral("aclrtFree");
        tailExpected << QStringLiteral("aclDestroyTensor") << QStringLiteral("aclDestroyTensor")
                     << QStringLiteral("aclDestroyTensor") << QStringLiteral("aclrtFree")
                     << QStringLiteral("aclrtFree") << QStringLiteral("aclrtFree")
                     << QStringLiteral("aclrtDestroyStream") << QStringLiteral("aclrtResetDevice 0");
        QCOMPARE(rest, tailExpected);
        QCOMPARE(m_hooks.calls("aclInit"), 0L); // once per process, long before
        QVERIFY2(m_hooks.leaks().empty(), m_hooks.leaks().c_str());
    }
}

// ---- a failing call anywhere: the error names it, and nothing stays allocated ----

void TestAscendBackend::errorsReleaseEverything_data() {
    QTest::addColumn<QString>("call");
    QTest::addColumn<int>("nth");
    QTest::addColumn<long>("code");         // what the AscendError carries (-1: a NULL result)
    QTest::addColumn<bool>("executorLeft"); // between GetWorkspaceSize and a completed launch: the
                                            // documented ABI has no call that releases an executor
    QTest::addRow("aclrtSetDevice") << QStringLiteral("aclrtSetDevice") << 1 << 207001L << false;
    QTest::addRow("aclrtCreateStream") << QStringLiteral("aclrtCreateStream") << 1 << 207001L << false;
    QTest::addRow("aclrtMalloc/x") << QStringLiteral("aclrtMalloc") << 1 << 207001L << false;
    QTest::addRow("aclrtMalloc/out") << QStringLiteral("aclrtMalloc") << 4 << 207001L << false;
    QTest::addRow("aclrtMalloc/workspace") << QStringLiteral("aclrtMalloc") << 5 << 207001L << true;
    QTest::addRow("aclrtMemcpy/upload") << QStringLiteral("aclrtMemcpy") << 2 << 207001L << false;
    QTest::addRow("aclCreateTensor/out") << QStringLiteral("aclCreateTensor") << 4 << -1L << false;
    QTest::addRow("GetWorkspaceSize")
        << QStringLiteral("aclnnAscendQuantV3GetWorkspaceSize") << 1 << 207001L << false;
    QTest::addRow("launch") << QStringLiteral("aclnnAscendQuantV3") << 1 << 207001L << true;
    QTest::addRow("aclrtSynchronizeStream")
        << QStringLiteral("aclrtSynchronizeStream") << 1 << 207001L << false;
    QTest::addRow("aclrtMemcpy/download") << QStringLiteral("aclrtMemcpy") << 4 << 207001L << false;
}

void TestAscendBackend::errorsReleaseEverything() {
    QFETCH(QString, call);
    QFETCH(int, nth);
    QFETCH(long, code);
    QFETCH(bool, executorLeft);
    QuantSpec s = makeSpec(QStringLiteral("ascend-quant"), QStringLiteral("int4"),
                           QStringLiteral("per-channel"), -1, false);
    BackendTask job;
    job.plan = resolveSpec(s, {3, 8});
    const auto values = sampleValues(24, 9);
    job.values = values;
    const AscendBackend backend;
    const long executors = m_hooks.live("executors");
    m_hooks.fail(call.toUtf8().constData(), nth, 207001);
    try {
        backend.run(job);
        QFAIL("the injected failure did not surface");
    } catch (const AscendError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(call), e.what());
        QCOMPARE(e.code(), code);
        if (code > 0) QVERIFY2(QString::fromUtf8(e.what()).contains(QString::number(code)), e.what());
    }
    QVERIFY2(m_hooks.leaks().empty(), (m_hooks.leaks() + "\n" + m_hooks.log()).c_str());
    QCOMPARE(m_hooks.live("executors") - executors, executorLeft ? 1L : 0L);
    // The backend stays usable after a failure.
    const Result r = backend.run(job);
    QCOMPARE(r.codes, CpuReferenceBackend().run(job).codes);
    QVERIFY(m_hooks.leaks().empty());
}

void TestAscendBackend::timingProgressAndCancel() {
    QuantSpec s = makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int8"),
                           QStringLiteral("per-channel"), 0, true);
    BackendTask job;
    job.plan = resolveSpec(s, {64, 33});
    const auto values = sampleValues(64 * 33, 1);
    job.values = values;
    job.repeat = 3;
    const AscendBackend backend;
    std::vector<double> seen;
    const Result r = backend.run(job, [&](double d) {
        seen.push_back(d);
        return true;
    });
    QCOMPARE(r.timing.runs, 3);
    QCOMPARE(seen.size(), std::size_t{4});
    QCOMPARE(seen.back(), 1.0);
    const PhaseTimes& m = r.timing.median;
    QVERIFY(m.prepareMs > 0 && m.uploadMs > 0 && m.kernelMs > 0 && m.downloadMs > 0);
    QVERIFY(m.totalMs >= m.uploadMs + m.kernelMs);
    QCOMPARE(m_hooks.calls("aclnnQuantize"), 3L);
    int calls = 0;
    QVERIFY_THROWS_EXCEPTION(Cancelled, backend.run(job, [&](double) { return ++calls < 2; }));
    QCOMPARE(m_hooks.calls("aclnnQuantize"), 4L); // stopped after the first repeat
    QVERIFY(m_hooks.leaks().empty());
}

// ---- what the backend refuses, and why ----

void TestAscendBackend::unsupportedSpecs_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<QString>("reason"); // empty: supported
    const QString pc = QStringLiteral("per-channel");
    QTest::addRow("torch") << makeSpec(QStringLiteral("torch"), QStringLiteral("int8"), pc, 0, true)
                           << Shape{4, 8} << QStringLiteral("preset torch has no CANN operator");
    QTest::addRow("mx") << makeSpec(QStringLiteral("mx"), QStringLiteral("fp8-e4m3"), QStringLiteral("block"),
                                    -1, true)
                        << Shape{4, 32} << QStringLiteral("preset mx has no CANN operator");
    QTest::addRow("aclnn-quantize/fp8")
        << makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("fp8-e4m3"), pc, 0, true) << Shape{4, 8}
        << QStringLiteral("Ascend 950");
    QTest::addRow("ascend-quant/fp8")
        << makeSpec(QStringLiteral("ascend-quant"), QStringLiteral("fp8-e5m2"), pc, -1, true) << Shape{4, 8}
        << QStringLiteral("Ascend 950");
    QuantSpec narrow = makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int8"), pc, 0, true);
    narrow.narrowRange = true;
    QTest::addRow("narrow-range") << narrow << Shape{4, 8}
                                  << QStringLiteral("narrow range is not an operator option");
    QTest::addRow("empty") << makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int8"), pc, 0, true)
                           << Shape{0, 8} << QStringLiteral("is empty");
    QTest::addRow("supported") << makeSpec(QStringLiteral("ascend-quant"), QStringLiteral("int4"), pc, -2,
                                           true)
                               << Shape{4, 8} << QString();
}

void TestAscendBackend::unsupportedSpecs() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(QString, reason);
    const ResolvedSpec plan = resolveSpec(spec, shape);
    const auto why = AscendBackend().supports(plan);
    if (reason.isEmpty()) {
        QVERIFY2(!why, why.value_or("").c_str());
        return;
    }
    QVERIFY(why);
    QVERIFY2(QString::fromStdString(*why).contains(reason), why->c_str());
    BackendTask job;
    job.plan = plan;
    const std::vector<float> values(static_cast<std::size_t>(elementCount(shape)), 1.0f);
    job.values = values;
    QVERIFY_THROWS_EXCEPTION(QuantError, AscendBackend().run(job));
    QCOMPARE(m_hooks.calls("aclrtMalloc"), 0L); // refused before the device is touched
}

void TestAscendBackend::unavailableWithoutLibraries() {
    QTemporaryDir empty;
    QVERIFY(empty.isValid());
    const EnvGuard dir("QUANTLENS_ASCEND_LIB_DIR", empty.path().toUtf8().constData());
    const AscendBackend backend;
    const auto why = backend.unavailableReason();
    QVERIFY(why);
    QVERIFY2(QString::fromStdString(*why).contains(QLatin1String("libascendcl.so not found")), why->c_str());
    QVERIFY2(QString::fromStdString(*why).contains(empty.path()), why->c_str());
    QCOMPARE(backend.deviceDescription(), std::string("Ascend NPU (not available)"));
    QVERIFY(backend.libraries().empty());
    const ResolvedSpec plan = resolveSpec(makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int8"),
                                                   QStringLiteral("per-tensor"), 0, true),
                                          {4});
    QCOMPARE(backend.supports(plan), why);
    BackendTask job;
    job.plan = plan;
    const std::vector<float> values{1, 2, 3, 4};
    job.values = values;
    QVERIFY_THROWS_EXCEPTION(QuantError, backend.run(job));
}

void TestAscendBackend::defaultSearchFindsNothingHere() {
    QTemporaryDir home;
    const EnvGuard dir("QUANTLENS_ASCEND_LIB_DIR", nullptr);
    const EnvGuard toolkit("ASCEND_TOOLKIT_HOME", nullptr);
    const EnvGuard homePath("ASCEND_HOME_PATH", home.path().toUtf8().constData());
    const auto dirs = ascendSearchDirs();
    QCOMPARE(dirs.size(), std::size_t{3});
    QCOMPARE(QString::fromStdString(dirs[0]), home.path() + QLatin1String("/lib64"));
    QCOMPARE(dirs[1], std::string("/usr/local/Ascend/ascend-toolkit/latest/lib64"));
    QVERIFY(dirs[2].empty()); // the loader path
    {
        // In this process the loader path finds the stand-in by its soname; unless a test allows
        // it, it is refused, never offered as a device.
        const EnvGuard allow("QUANTLENS_ASCEND_ALLOW_STANDIN", nullptr);
        const auto why = AscendBackend().unavailableReason();
        QVERIFY(why);
    }
    // A fresh process sees what a user would.
    QProcess probe;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QUANTLENS_ASCEND_ALLOW_STANDIN"));
    probe.setProcessEnvironment(env);
    probe.start(QStringLiteral(QL_ASCEND_PROBE), {});
    QVERIFY(probe.waitForFinished(30000));
    const QString out = QString::fromUtf8(probe.readAllStandardOutput());
    if (probe.exitCode() == 0) QSKIP("CANN is installed on this machine: the default search finds it");
    QVERIFY2(out.contains(QLatin1String("libascendcl.so not found")), qPrintable(out));
    QVERIFY2(out.contains(home.path() + QLatin1String("/lib64")), qPrintable(out));
    QVERIFY2(out.contains(QLatin1String("/usr/local/Ascend/ascend-toolkit/latest/lib64")), qPrintable(out));
    QVERIFY2(out.contains(QLatin1String("the loader path")), qPrintable(out));
}

void TestAscendBackend::missingEntryPointIsNamed() {
    const EnvGuard dir("QUANTLENS_ASCEND_LIB_DIR", QL_STANDIN_PARTIAL_DIR);
    const AscendBackend backend;
    const auto why = backend.unavailableReason();
    QVERIFY(why);
    const QString text = QString::fromStdString(*why);
    QVERIFY2(text.contains(QLatin1String("lack aclnnGroupQuantGetWorkspaceSize, aclnnGroupQuant (")),
             why->c_str());
    QVERIFY2(text.contains(QLatin1String("libopapi_nn.so")), why->c_str()); // preferred over libopapi.so
    QCOMPARE(backend.libraries().size(), std::size_t{3});
}

void TestAscendBackend::standInIsNeverADevice() {
    {
        const EnvGuard allow("QUANTLENS_ASCEND_ALLOW_STANDIN", nullptr);
        const AscendBackend refused;
        QVERIFY(refused.isStandIn());
        const auto why = refused.unavailableReason();
        QVERIFY(why);
        QVERIFY2(QString::fromStdString(*why).contains(QLatin1String("stand-in for CANN (a test double)")),
                 why->c_str());
    }
    const AscendBackend allowed;
    QVERIFY(!allowed.unavailableReason());
    const QString description = QString::fromStdString(allowed.deviceDescription());
    QVERIFY(description.contains(QLatin1String("stand-in")));
    QVERIFY(description.contains(QLatin1String("not a device")));
    QVERIFY(!description.contains(QLatin1String("QuantLensStandIn"))); // no chip name from the double
}

void TestAscendBackend::noDevice() {
    m_hooks.setDeviceCount(0);
    const auto none = AscendBackend().unavailableReason();
    QVERIFY(none);
    QVERIFY2(QString::fromStdString(*none).contains(QLatin1String("finds no NPU")), none->c_str());
    m_hooks.setDeviceCount(2);
    {
        const EnvGuard device("QUANTLENS_ASCEND_DEVICE", "3");
        const auto why = AscendBackend().unavailableReason();
        QVERIFY(why);
        QVERIFY2(QString::fromStdString(*why).contains(QLatin1String("device 3")), why->c_str());
    }
    {
        const EnvGuard device("QUANTLENS_ASCEND_DEVICE", "npu1");
        const auto why = AscendBackend().unavailableReason();
        QVERIFY(why);
        QVERIFY2(QString::fromStdString(*why).contains(QLatin1String("not a device number")), why->c_str());
    }
    const EnvGuard device("QUANTLENS_ASCEND_DEVICE", "1");
    const AscendBackend second;
    QVERIFY(!second.unavailableReason());
    QVERIFY(QString::fromStdString(second.deviceDescription()).contains(QLatin1String("stand-in")));
    BackendTask job;
    job.plan = resolveSpec(makeSpec(QStringLiteral("aclnn-quantize"), QStringLiteral("int8"),
                                    QStringLiteral("per-tensor"), 0, true),
                           {4});
    const std::vector<float> values{1, 2, 3, 4};
    job.values = values;
    second.run(job);
    QVERIFY(QString::fromUtf8(m_hooks.log()).contains(QLatin1String("aclrtSetDevice 1\n")));
}

void TestAscendBackend::registration() {
    BackendRegistry registry;
    registerAscendBackend(registry);
    const Backend* b = registry.find("ascend");
    QVERIFY(b);
    QCOMPARE(b->name(), std::string("ascend"));
}

QTEST_GUILESS_MAIN(TestAscendBackend)
#include "tst_ascend_backend.moc"
