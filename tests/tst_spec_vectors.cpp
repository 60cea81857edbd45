// Every vector of spec §7 (PyTorch oracle, pypto, Ascend, npu_group_quant, TensorRT) as a named row.
#include "quant_test_util.h"
#include "tensor/float_formats.h"

#include <QTest>
#include <cmath>
#include <limits>

using namespace ql;
using qltest::bits;
using qltest::spec;

class TestSpecVectors : public QObject {
    Q_OBJECT
private slots:
    void vectors_data();
    void vectors();
    void pyptoDocumentedUint8ExampleDiffers();
    void sqrtModeOrderDiffersFromGolden();
    void reciprocalVersusDivision();
    void tensorRtDequantize();
    void fakeQuantize_data();
    void fakeQuantize();
};

void TestSpecVectors::vectors_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    QTest::addColumn<std::vector<float>>("x");
    QTest::addColumn<std::vector<float>>("scales");
    QTest::addColumn<std::vector<float>>("zeroPoints");
    QTest::addColumn<std::vector<int>>("expected");

    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto pt = [](Target t, bool sym = true) {
        return spec(Preset::Torch, t, Scheme::PerTensor, {}, sym);
    };
    const auto pc = [](Preset p, Target t, std::vector<int> axes, bool sym = true) {
        return spec(p, t, Scheme::PerChannel, std::move(axes), sym);
    };
    const std::vector<float> ties{0.5f,   1.5f,   2.5f,   -0.5f,   -1.5f,   -2.5f, 3.5f,
                                  127.4f, 127.5f, 128.0f, -128.5f, -129.0f, 1e9f,  -1e9f};

    // §7.1 PyTorch (torch 1.13, x86).
    QTest::addRow("torch/V-Q1/qint8-ties")
        << pt(Target::Int8) << std::vector<std::int64_t>{14} << ties << std::vector<float>{1}
        << std::vector<float>{}
        << std::vector<int>{0, 2, 2, 0, -2, -2, 4, 127, 127, 127, -128, -128, 127, -128};
    QTest::addRow("torch/V-Q2/quint8-zp128")
        << pt(Target::UInt8, false) << std::vector<std::int64_t>{14} << ties << std::vector<float>{1}
        << std::vector<float>{128}
        << std::vector<int>{128, 130, 130, 128, 126, 126, 132, 255, 255, 255, 0, 0, 255, 0};
    QTest::addRow("torch/V-Q3/quint8-saturation")
        << pt(Target::UInt8) << std::vector<std::int64_t>{6}
        << std::vector<float>{-3, -0.4f, 0.4f, 254.5f, 255.5f, 300} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{0, 0, 0, 254, 255, 255};
    QTest::addRow("torch/V-Q4/scale-half")
        << pt(Target::Int8) << std::vector<std::int64_t>{4} << std::vector<float>{1.25f, -1.25f, 0.25f, 0.75f}
        << std::vector<float>{0.5f} << std::vector<float>{} << std::vector<int>{2, -2, 0, 2};
    QTest::addRow("torch/V-Q5/reciprocal-quint8-128")
        << pt(Target::UInt8) << std::vector<std::int64_t>{1} << std::vector<float>{bits(0x3E8C41DB)}
        << std::vector<float>{bits(0x3B0CCEAA)} << std::vector<float>{} << std::vector<int>{128};
    QTest::addRow("torch/V-Q5/reciprocal-qint8-clamped")
        << pt(Target::Int8) << std::vector<std::int64_t>{1} << std::vector<float>{bits(0x3E8C41DB)}
        << std::vector<float>{bits(0x3B0CCEAA)} << std::vector<float>{} << std::vector<int>{127};
    QTest::addRow("torch/V-Q6/scale-0.1-ties")
        << pt(Target::Int8) << std::vector<std::int64_t>{5}
        << std::vector<float>{0.25f, 0.35f, 0.45f, 0.05f, -0.25f} << std::vector<float>{0.1f}
        << std::vector<float>{} << std::vector<int>{2, 4, 4, 0, -2};
    QTest::addRow("torch/V-Q7/qint32")
        << pt(Target::Int32) << std::vector<std::int64_t>{5}
        << std::vector<float>{2.5f, -2.5f, 3e9f, -3e9f, 1e10f} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{2, -2, 2147483647, -2147483647 - 1, 2147483647};
    QTest::addRow("torch/qint32-zero-point-added-in-fp32")
        << pt(Target::Int32, false) << std::vector<std::int64_t>{1} << std::vector<float>{16777218.0f}
        << std::vector<float>{1} << std::vector<float>{1} << std::vector<int>{16777220};
    QTest::addRow("torch/V-Q8/zp-after-rounding")
        << pt(Target::UInt8, false) << std::vector<std::int64_t>{3} << std::vector<float>{0.5f, 1.5f, -0.5f}
        << std::vector<float>{1} << std::vector<float>{3} << std::vector<int>{3, 5, 3};
    QTest::addRow("torch/V-Q9/per-channel-axis1")
        << pc(Preset::Torch, Target::Int8, {1}, false) << std::vector<std::int64_t>{2, 3}
        << std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300} << std::vector<float>{1, 0.5f, 0.25f}
        << std::vector<float>{0, 10, -5} << std::vector<int>{0, 13, 5, 0, 7, 127};
    QTest::addRow("torch/V-Q10/per-channel-axis0")
        << pc(Preset::Torch, Target::UInt8, {0}, false) << std::vector<std::int64_t>{2, 3}
        << std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300} << std::vector<float>{1, 2}
        << std::vector<float>{0, 100} << std::vector<int>{0, 2, 2, 100, 99, 250};
    QTest::addRow("torch/V-Q14/quint4x2")
        << pt(Target::UInt4) << std::vector<std::int64_t>{8}
        << std::vector<float>{0, 1, 2.5f, 3.5f, 15, 16, -1, 7.5f} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{0, 1, 2, 4, 15, 15, 0, 8};
    QTest::addRow("torch/V-Q15/quint4x2-zp8")
        << pt(Target::UInt4, false) << std::vector<std::int64_t>{8}
        << std::vector<float>{-4, -3.75f, 0, 0.25f, 3.5f, 3.75f, 4, 10} << std::vector<float>{0.5f}
        << std::vector<float>{8} << std::vector<int>{0, 0, 8, 8, 15, 15, 15, 15};
    QTest::addRow("torch/quint4x2-per-tensor-zp-after-rounding")
        << pt(Target::UInt4, false) << std::vector<std::int64_t>{1} << std::vector<float>{3.4999998f}
        << std::vector<float>{1} << std::vector<float>{8} << std::vector<int>{11};
    QTest::addRow("torch/quint4x2-per-channel-zp-before-rounding")
        << pc(Preset::Torch, Target::UInt4, {0}, false) << std::vector<std::int64_t>{1}
        << std::vector<float>{3.4999998f} << std::vector<float>{1} << std::vector<float>{8}
        << std::vector<int>{12};
    QTest::addRow("torch/V-Q16/scale-one-third")
        << pt(Target::Int8) << std::vector<std::int64_t>{2} << std::vector<float>{0.5f, 1.5f}
        << std::vector<float>{static_cast<float>(1.0 / 3.0)} << std::vector<float>{}
        << std::vector<int>{2, 4};
    QTest::addRow("torch/V-Q17/non-finite-x86")
        << pt(Target::Int8) << std::vector<std::int64_t>{3} << std::vector<float>{nan, inf, -inf}
        << std::vector<float>{1} << std::vector<float>{} << std::vector<int>{-128, -128, -128};

    // §7.2 pypto.quantize: --axis names the own-scale axis (pypto axis=-1 on [R,C] is --axis 0).
    const std::vector<float> doc{1.1f, -2.2f, 3.3f, -4.4f, 1.1f, -2.2f,
                                 3.3f, -4.4f, 1.1f, -2.2f, 3.3f, -4.4f};
    QTest::addRow("pypto/V-P1/int8/doc-example")
        << pc(Preset::PyPTO, Target::Int8, {0}) << std::vector<std::int64_t>{3, 4} << doc
        << std::vector<float>{1, 1, 1} << std::vector<float>{}
        << std::vector<int>{1, -2, 3, -4, 1, -2, 3, -4, 1, -2, 3, -4};
    QTest::addRow("pypto/V-P2/uint8/doc-example-as-implemented")
        << pc(Preset::PyPTO, Target::UInt8, {0}, false) << std::vector<std::int64_t>{3, 4} << doc
        << std::vector<float>{1, 1, 1} << std::vector<float>{-5, -5, -5} << std::vector<int>(12, 0);
    QTest::addRow("pypto/V-P3/ties") << pc(Preset::PyPTO, Target::Int8, {0})
                                     << std::vector<std::int64_t>{1, 9}
                                     << std::vector<float>{0.5f,   1.5f,   2.5f,    -0.5f, -2.5f,
                                                           127.5f, 128.5f, -128.5f, -129}
                                     << std::vector<float>{1} << std::vector<float>{}
                                     << std::vector<int>{0, 2, 2, 0, -2, 127, 127, -128, -128};
    QTest::addRow("pypto/V-P4/axis-1-per-row")
        << pc(Preset::PyPTO, Target::Int8, {0}) << std::vector<std::int64_t>{2, 2}
        << std::vector<float>{1, 2, 3, 4} << std::vector<float>{0.5f, 2} << std::vector<float>{}
        << std::vector<int>{0, 1, 6, 8};
    QTest::addRow("pypto/V-P5/axis-2-per-column")
        << pc(Preset::PyPTO, Target::Int8, {1}) << std::vector<std::int64_t>{2, 2}
        << std::vector<float>{1, 2, 3, 4} << std::vector<float>{0.5f, 2} << std::vector<float>{}
        << std::vector<int>{0, 4, 2, 8};
    QTest::addRow("pypto/V-P6/uint8-zp128")
        << pc(Preset::PyPTO, Target::UInt8, {0}, false) << std::vector<std::int64_t>{1, 6}
        << std::vector<float>{0.5f, 1.5f, -0.5f, -1.5f, 200, -200} << std::vector<float>{1}
        << std::vector<float>{128} << std::vector<int>{128, 130, 128, 126, 255, 0};

    // §7.3 Ascend aclnn.
    QTest::addRow("aclnn-quantize/V-A1/doc-int32")
        << pc(Preset::AclnnQuantize, Target::Int32, {1}, false) << std::vector<std::int64_t>{4, 2}
        << std::vector<float>{0.3382f, -0.0919f, 0.7564f, 0.0234f, 3.1024f, 1.0761f, 0.4228f, 1.4621f}
        << std::vector<float>{1, -3} << std::vector<float>{2, 10}
        << std::vector<int>{2, 10, 3, 10, 5, 10, 2, 10};
    QTest::addRow("aclnn-quantize/V-A2/divide-ties")
        << spec(Preset::AclnnQuantize, Target::Int8, Scheme::PerTensor) << std::vector<std::int64_t>{5}
        << std::vector<float>{1, 3, 5, -1, -3} << std::vector<float>{2} << std::vector<float>{}
        << std::vector<int>{0, 2, 2, 0, -2};
    QTest::addRow("aclnn-quantize/V-A3/division-127")
        << spec(Preset::AclnnQuantize, Target::UInt8, Scheme::PerTensor) << std::vector<std::int64_t>{1}
        << std::vector<float>{bits(0x3E8C41DB)} << std::vector<float>{bits(0x3B0CCEAA)}
        << std::vector<float>{} << std::vector<int>{127};
    const std::vector<float> a4{2.5f, -2.5f, 2.7f, -2.7f, 0.5f, -0.5f, 200, -200};
    const std::pair<Rounding, std::vector<int>> modes[] = {
        {Rounding::HalfToEven, {2, -2, 3, -3, 0, 0, 127, -128}},
        {Rounding::Floor, {2, -3, 2, -3, 0, -1, 127, -128}},
        {Rounding::Ceil, {3, -2, 3, -2, 1, 0, 127, -128}},
        {Rounding::Trunc, {2, -2, 2, -2, 0, 0, 127, -128}},
    };
    for (const auto& [mode, expected] : modes) {
        auto s = spec(Preset::AscendQuant, Target::Int8, Scheme::PerTensor);
        s.rounding = mode;
        QTest::addRow("ascend-quant/V-A4/%s", nameOf(mode).data())
            << s << std::vector<std::int64_t>{8} << a4 << std::vector<float>{1} << std::vector<float>{}
            << expected;
    }
    auto sqrt = spec(Preset::AscendQuant, Target::Int8, Scheme::PerTensor);
    sqrt.sqrtMode = true;
    QTest::addRow("ascend-quant/V-A5/sqrt-mode")
        << sqrt << std::vector<std::int64_t>{1} << std::vector<float>{3} << std::vector<float>{1.5f}
        << std::vector<float>{} << std::vector<int>{7};
    QTest::addRow("ascend-quant/V-A6/sqrt-order-a2a3")
        << sqrt << std::vector<std::int64_t>{1} << std::vector<float>{bits(0x42197678)}
        << std::vector<float>{bits(0x3FE3C928)} << std::vector<float>{} << std::vector<int>{121};
    QTest::addRow("ascend-quant/V-A7/int4")
        << spec(Preset::AscendQuant, Target::Int4, Scheme::PerTensor) << std::vector<std::int64_t>{8}
        << std::vector<float>{0.5f, 1.5f, 7.4f, 7.6f, -8.6f, -3.5f, 2.5f, 9} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{0, 2, 7, 7, -8, -4, 2, 7};

    // §7.4 npu_group_quant: the documented example (fp16 x and fp32 scales, as the emulation).
    auto g = spec(Preset::NpuGroupQuant, Target::Int8, Scheme::Ragged, {0}, false);
    g.groupEnds = {1, 4, 6, 6};
    std::vector<float> xg{1.0029f,  -1.2373f, 1.0107f,  -0.2681f, 0.5791f, 0.1101f, 1.0059f, -0.9658f,
                          -1.7637f, 1.7588f,  -1.3193f, 0.3989f,  1.3262f, 0.4854f, 1.9551f, 0.9697f,
                          -0.8770f, -1.8828f, 2.1777f,  -0.0050f, 0.4722f, 0.5605f, 0.8267f, -0.9810f};
    for (auto& v : xg)
        v = halfToFloat(floatToHalf(v));
    QTest::addRow("npu-group-quant/V-G1/doc-example")
        << g << std::vector<std::int64_t>{6, 4} << xg
        << std::vector<float>{-0.2710f, -0.9381f, 0.2850f,  -1.1230f, 0.5217f,  -0.7233f, -0.1730f, -0.1245f,
                              -1.5433f, -0.9129f, -2.2095f, 1.7371f,  -0.8253f, 0.3973f,  0.1430f,  0.3885f}
        << std::vector<float>{-1.1658f} << std::vector<int>{-1, 0,  -1, -1, -1, -1, -1, -1, -2, -2, -1, -1,
                                                            0,  -2, -2, -1, 0,  1,  -6, -1, -2, -2, -3, -3};

    // §7.5 TensorRT.
    QTest::addRow("tensorrt/V-R1/int8")
        << spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor) << std::vector<std::int64_t>{9}
        << std::vector<float>{0.56f, 0.89f, 1.4f, -0.56f, 0.39f, 6.0f, 0.67f, 0.11f, -3.6f}
        << std::vector<float>{1.0f / 127.0f} << std::vector<float>{}
        << std::vector<int>{71, 113, 127, -71, 50, 127, 85, 14, -128};
    QTest::addRow("tensorrt/V-R2/int8-ties")
        << spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor) << std::vector<std::int64_t>{7}
        << std::vector<float>{0.5f, 1.5f, 2.5f, -2.5f, 127.5f, -128.5f, 300} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<int>{0, 2, 2, -2, 127, -128, 127};
    QTest::addRow("tensorrt/V-R4/fp8-saturates")
        << spec(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor) << std::vector<std::int64_t>{5}
        << std::vector<float>{449, 464, 465, 1e6f, -1e6f} << std::vector<float>{1} << std::vector<float>{}
        << std::vector<int>{0x7E, 0x7E, 0x7E, 0x7E, 0xFE};
    auto blk = spec(Preset::TensorRT, Target::Int4, Scheme::Block);
    blk.block = {2, 1};
    std::vector<float> w(32), bs(16);
    for (int i = 0; i < 32; ++i)
        w[i] = static_cast<float>(i % 11) - 5.3f + 0.1f * static_cast<float>(i / 8);
    for (int i = 0; i < 16; ++i)
        bs[i] = 0.5f + 0.25f * static_cast<float>(i % 5);
    std::vector<int> expectedBlock(32);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 8; ++c) {
            const float q = std::nearbyint(w[r * 8 + c] / bs[(r / 2) * 8 + c]);
            expectedBlock[r * 8 + c] = static_cast<int>(std::fmin(7.0f, std::fmax(-8.0f, q)));
        }
    QTest::addRow("tensorrt/V-R3/int4-block-2x1")
        << blk << std::vector<std::int64_t>{4, 8} << w << bs << std::vector<float>{} << expectedBlock;
}

void TestSpecVectors::vectors() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<std::int64_t>, shape);
    QFETCH(std::vector<float>, x);
    QFETCH(std::vector<float>, scales);
    QFETCH(std::vector<float>, zeroPoints);
    QFETCH(std::vector<int>, expected);
    QCOMPARE(qltest::quantize(spec, shape, x, scales, zeroPoints), expected);
}

void TestSpecVectors::pyptoDocumentedUint8ExampleDiffers() {
    // pypto's documentation prints [6,3,8,1] for uint8 with zp=-5: that is round(x*s - zp). The kernel
    // and all three goldens add the zero point (spec §1), giving all zeros; QuantLens follows the kernel.
    const auto s = spec(Preset::PyPTO, Target::UInt8, Scheme::PerChannel, {0}, false);
    const std::vector<float> x{1.1f, -2.2f, 3.3f, -4.4f};
    const auto implemented = qltest::quantize(s, {1, 4}, x, {1}, {-5});
    const auto documented = qltest::quantize(s, {1, 4}, x, {1}, {5}); // the doc's sign
    QCOMPARE(implemented, (std::vector<int>{0, 0, 0, 0}));
    QCOMPARE(documented, (std::vector<int>{6, 3, 8, 1}));
    QVERIFY(implemented != documented);
    QVERIFY(resolveSpec(s, {1, 4}).notes.find("implementation adds") != std::string::npos);
}

void TestSpecVectors::sqrtModeOrderDiffersFromGolden() {
    const float x = bits(0x42197678), s = bits(0x3FE3C928);
    const float kernel = (x * s) * s, golden = x * (s * s);
    QCOMPARE(std::nearbyint(kernel), 121.0f);
    QCOMPARE(std::nearbyint(golden), 122.0f);
}

void TestSpecVectors::reciprocalVersusDivision() {
    const float x = bits(0x3E8C41DB), s = bits(0x3B0CCEAA);
    QCOMPARE(x * (1.0f / s), 127.5f);
    QVERIFY(x / s < 127.5f);
}

void TestSpecVectors::tensorRtDequantize() {
    // V-R1: -3.6 clamps to -128, so it dequantizes to -128/127 = -1.00787, not the operator page's -1.0.
    const auto plan = resolveSpec(spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor), {1});
    QCOMPARE(dequantizeValue(-128, 1.0f / 127.0f, 0, plan), -128.0f * (1.0f / 127.0f));
    QVERIFY(std::fabs(dequantizeValue(71, 1.0f / 127.0f, 0, plan) - 0.55906f) < 1e-5f);
}

void TestSpecVectors::fakeQuantize_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    QTest::addColumn<std::vector<float>>("x");
    QTest::addColumn<std::vector<float>>("scales");
    QTest::addColumn<std::vector<float>>("zeroPoints");
    QTest::addColumn<std::vector<float>>("expected");
    QTest::addRow("torch/V-Q11/fake-quant-int8")
        << spec(Preset::Torch, Target::Int8, Scheme::PerTensor) << std::vector<std::int64_t>{8}
        << std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 200, -200, 127.5f} << std::vector<float>{1}
        << std::vector<float>{} << std::vector<float>{0, 2, 2, 0, -2, 127, -128, 127};
    QTest::addRow("torch/V-Q12/fake-quant-0-15")
        << spec(Preset::Torch, Target::UInt4, Scheme::PerTensor, {}, false) << std::vector<std::int64_t>{4}
        << std::vector<float>{0.3f, 0.25f, -1.0f, 10.0f} << std::vector<float>{0.5f} << std::vector<float>{2}
        << std::vector<float>{0.5f, 0.0f, -1.0f, 6.5f};
    // fake_quantize_per_channel with [-8, 7]: torch's arithmetic on a signed 4-bit range (custom convention).
    auto custom = spec(Preset::Custom, Target::Int4, Scheme::PerChannel, {0}, false);
    custom.custom = conventionOf(spec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}));
    QTest::addRow("torch/V-Q13/fake-quant-per-channel-int4")
        << custom << std::vector<std::int64_t>{2, 2} << std::vector<float>{0.5f, 2.5f, 0.75f, 100}
        << std::vector<float>{1, 0.5f} << std::vector<float>{0, 1} << std::vector<float>{0, 2, 1, 3};
}

void TestSpecVectors::fakeQuantize() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<std::int64_t>, shape);
    QFETCH(std::vector<float>, x);
    QFETCH(std::vector<float>, scales);
    QFETCH(std::vector<float>, zeroPoints);
    QFETCH(std::vector<float>, expected);
    const auto plan = resolveSpec(spec, shape);
    QuantParams p{scales, zeroPoints, {}, 0};
    QCOMPARE(dequantizeReference(plan, p, quantizeReference(plan, p, x)), expected);
}

QTEST_GUILESS_MAIN(TestSpecVectors)
#include "tst_spec_vectors.moc"
