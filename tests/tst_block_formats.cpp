// OCP MX (E8M0 floor rule) and NVFP4 (E4M3 block scale x fp32 tensor scale): spec §6.3, §6.4, §7.6.
#include "quant/calibration.h"
#include "quant/packing.h"
#include "quant_test_util.h"

#include <QTest>
#include <cmath>
#include <tuple>

using namespace ql;

namespace {

QuantSpec blockSpec(Preset p, Target t) {
    QuantSpec s = qltest::spec(p, t, Scheme::Block, {-1});
    s.calibration.method = CalibMethod::AbsMax;
    return s;
}

} // namespace

class TestBlockFormats : public QObject {
    Q_OBJECT
private slots:
    void mx_data();
    void mx();
    void mxBlocksAreIndependentAndShortTailAllowed();
    void mxAllZeroAndNanBlocks();
    void nvfp4Recipe();
    void nvfp4AllZeroBlock();
    void nvfp4NeedsDividingBlocks();
    void blockFormatsRefuseAnotherBlock();
};

void TestBlockFormats::mx_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<std::vector<float>>("x");
    QTest::addColumn<int>("scaleCode");
    QTest::addColumn<std::vector<int>>("codes");
    QTest::addColumn<std::vector<float>>("dequantized");
    QTest::addRow("mxfp8/V-MX1") << int(Target::Fp8E4M3)
                                 << std::vector<float>{1, -3, 1792, 0.001f, 600, 1000, 1500, 1792} << 0x81
                                 << std::vector<int>{0x28, 0xB4, 0x7E, 0x00, 0x71, 0x78, 0x7C, 0x7E}
                                 << std::vector<float>{1, -3, 1792, 0, 576, 1024, 1536, 1792};
    QTest::addRow("mxfp4/V-MX2") << int(Target::Fp4E2M1)
                                 << std::vector<float>{0.1f, -0.3f, 1, 2.9f, 3, -5.5f, 6, 7.9f} << 0x7F
                                 << std::vector<int>{0x0, 0x9, 0x2, 0x5, 0x5, 0xF, 0x7, 0x7}
                                 << std::vector<float>{0, -0.5f, 1, 3, 3, -6, 6, 6};
}

void TestBlockFormats::mx() {
    QFETCH(int, target);
    QFETCH(std::vector<float>, x);
    QFETCH(int, scaleCode);
    QFETCH(std::vector<int>, codes);
    QFETCH(std::vector<float>, dequantized);
    const auto plan = resolveSpec(blockSpec(Preset::MX, Target(target)), {std::int64_t(x.size())});
    const auto params = calibrate(plan, x);
    QCOMPARE(params.scaleCodes, (std::vector<std::uint8_t>{std::uint8_t(scaleCode)}));
    const auto q = quantizeReference(plan, params, x);
    QCOMPARE(qltest::toInts(q), codes);
    QCOMPARE(dequantizeReference(plan, params, q), dequantized);
}

void TestBlockFormats::mxBlocksAreIndependentAndShortTailAllowed() {
    std::vector<float> x(70);
    for (int i = 0; i < 70; ++i)
        x[i] = i < 32 ? 1.0f : (i < 64 ? 100.0f : 0.25f);
    const auto plan = resolveSpec(blockSpec(Preset::MX, Target::Fp8E4M3), {70});
    QCOMPARE(plan.scaleShape, (Shape{3}));
    const auto p = calibrate(plan, x);
    // amax 1 -> 127-8; amax 100 (2^6.6) -> 127+6-8; amax 0.25 -> 127-2-8.
    QCOMPARE(p.scaleCodes, (std::vector<std::uint8_t>{119, 125, 117}));
}

void TestBlockFormats::mxAllZeroAndNanBlocks() {
    std::vector<float> x(64, 0.0f);
    x[40] = std::nanf("");
    const auto plan = resolveSpec(blockSpec(Preset::MX, Target::Fp8E4M3), {64});
    const auto p = calibrate(plan, x);
    QCOMPARE(p.scaleCodes, (std::vector<std::uint8_t>{0x00, 0xFF}));
    const auto q = quantizeReference(plan, p, x);
    QCOMPARE(q.at(0), 0);
    QCOMPARE(q.at(40) & 0x7F, 0x7F); // NaN block stays NaN
}

void TestBlockFormats::nvfp4Recipe() {
    std::vector<float> x(32);
    for (int i = 0; i < 32; ++i)
        x[i] = std::sin(0.37f * float(i)) * (i < 16 ? 3.0f : 0.2f);
    const auto plan = resolveSpec(blockSpec(Preset::NVFP4, Target::Fp4E2M1), {2, 16});
    const auto p = calibrate(plan, x);
    float amax = 0;
    for (float v : x)
        amax = std::max(amax, std::fabs(v));
    const float sg = amax / 2688.0f;
    QCOMPARE(p.tensorScale, sg);
    const auto q = quantizeReference(plan, p, x);
    for (int b = 0; b < 2; ++b) {
        float bmax = 0;
        for (int i = 0; i < 16; ++i)
            bmax = std::max(bmax, std::fabs(x[b * 16 + i]));
        const auto code = encodeMiniFloat(bmax / 6.0f / sg, MiniFloat::E4M3FN, Overflow::Saturate);
        QCOMPARE(int(p.scaleCodes[b]), int(code));
        const float denom = decodeMiniFloat(code, MiniFloat::E4M3FN) * sg;
        for (int i = 0; i < 16; ++i)
            QCOMPARE(q.at(b * 16 + i),
                     int(encodeMiniFloat(x[b * 16 + i] / denom, MiniFloat::E2M1, Overflow::Saturate)));
    }
    QCOMPARE(packNibbles(q).size(), std::size_t(16));
}

void TestBlockFormats::nvfp4AllZeroBlock() {
    std::vector<float> x(32, 0.0f);
    x[20] = 1.5f;
    const auto plan = resolveSpec(blockSpec(Preset::NVFP4, Target::Fp4E2M1), {32});
    const auto p = calibrate(plan, x);
    QCOMPARE(int(p.scaleCodes[0]), 0); // TRT-LLM: all-zero block gets scale code 0 and zero codes
    const auto q = quantizeReference(plan, p, x);
    for (int i = 0; i < 16; ++i)
        QCOMPARE(q.at(i), 0);
    QCOMPARE(q.at(20), 0x7); // the block max maps to 6
}

void TestBlockFormats::nvfp4NeedsDividingBlocks() {
    try {
        resolveSpec(blockSpec(Preset::NVFP4, Target::Fp4E2M1), {4, 40});
        QFAIL("40 elements cannot be split into 16-blocks");
    } catch (const QuantError& e) {
        QVERIFY(std::string(e.what()).find("divide") != std::string::npos);
    }
}

// The format fixes its block: no block, or the format's own, plans; any other is refused by name
// (it was ignored, so `--preset nvfp4 --block 32` ran 16-element blocks without a word).
void TestBlockFormats::blockFormatsRefuseAnotherBlock() {
    for (const auto& [preset, target, own] : {std::tuple{Preset::NVFP4, Target::Fp4E2M1, std::int64_t{16}},
                                              std::tuple{Preset::MX, Target::Fp8E4M3, std::int64_t{32}}}) {
        QuantSpec s = blockSpec(preset, target);
        QCOMPARE(resolveSpec(s, {4, 64}).scaleCount, 4 * 64 / own);
        s.block = {own};
        QCOMPARE(resolveSpec(s, {4, 64}).scaleCount, 4 * 64 / own);
        for (const std::vector<std::int64_t>& other :
             {std::vector<std::int64_t>{64 / own == 4 ? 32 : 16}, std::vector<std::int64_t>{1, own}}) {
            s.block = other;
            try {
                resolveSpec(s, {4, 64});
                QFAIL("another block than the format's was planned");
            } catch (const QuantError& e) {
                QVERIFY2(std::string(e.what()).find("blocks are " + std::to_string(own) + " elements") !=
                             std::string::npos,
                         e.what());
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestBlockFormats)
#include "tst_block_formats.moc"
