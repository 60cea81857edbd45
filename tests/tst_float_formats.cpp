// Narrow float encoders checked exhaustively: every representable value, every midpoint between
// neighbours (ties to the even code) and the floats just either side of it, plus spec §7.6.
#include "quant_test_util.h"
#include "tensor/float_formats.h"

#include <QTest>
#include <cmath>
#include <limits>
#include <map>

using namespace ql;

Q_DECLARE_METATYPE(ql::MiniFloat)

namespace {

struct FormatDesc {
    int expBits, mantBits, bias;
    bool e4m3, e5m2;
};

FormatDesc desc(MiniFloat f) {
    switch (f) {
    case MiniFloat::E4M3FN:
        return {4, 3, 7, true, false};
    case MiniFloat::E5M2:
        return {5, 2, 15, false, true};
    case MiniFloat::E2M1:
        break;
    }
    return {2, 1, 1, false, false};
}

// Independent enumeration: magnitude code -> value, finite codes only (spec §6.1 table).
std::map<double, int> finiteMagnitudes(MiniFloat f) {
    const auto d = desc(f);
    std::map<double, int> values;
    for (int code = 0; code < (1 << (d.expBits + d.mantBits)); ++code) {
        const int e = code >> d.mantBits, m = code & ((1 << d.mantBits) - 1);
        if (d.e4m3 && e == 15 && m == 7) continue;
        if (d.e5m2 && e == 31) continue;
        const double v = e == 0 ? m * std::pow(2.0, 1 - d.bias - d.mantBits)
                                : (1.0 + m / double(1 << d.mantBits)) * std::pow(2.0, e - d.bias);
        values[v] = code;
    }
    return values;
}

} // namespace

class TestFloatFormats : public QObject {
    Q_OBJECT
private slots:
    void exhaustive_data();
    void exhaustive();
    void overflow_data();
    void overflow();
    void specVectors_data();
    void specVectors();
    void decodeRoundTrips();
    void halfAndBf16();
    void e8m0();
};

void TestFloatFormats::exhaustive_data() {
    QTest::addColumn<MiniFloat>("format");
    QTest::addRow("e4m3fn") << MiniFloat::E4M3FN;
    QTest::addRow("e5m2") << MiniFloat::E5M2;
    QTest::addRow("e2m1") << MiniFloat::E2M1;
}

void TestFloatFormats::exhaustive() {
    QFETCH(MiniFloat, format);
    const auto values = finiteMagnitudes(format);
    const int signBit = 1 << (desc(format).expBits + desc(format).mantBits);
    int checked = 0;
    for (auto it = values.begin(); it != values.end(); ++it) {
        const auto [v, code] = *it;
        for (auto ov : {Overflow::Saturate, Overflow::NonSaturating}) {
            QCOMPARE(int(encodeMiniFloat(float(v), format, ov)), code);
            QCOMPARE(int(encodeMiniFloat(float(-v), format, ov)), code | signBit);
        }
        QCOMPARE(double(decodeMiniFloat(std::uint8_t(code), format)), v);
        auto next = std::next(it);
        if (next == values.end()) break;
        const double mid = (v + next->first) / 2;
        const int even = (code & 1) == 0 ? code : next->second;
        const float fm = float(mid);
        QCOMPARE(double(fm), mid); // every midpoint is an fp32 value
        QCOMPARE(int(encodeMiniFloat(fm, format, Overflow::Saturate)), even);
        QCOMPARE(int(encodeMiniFloat(-fm, format, Overflow::Saturate)), even | signBit);
        QCOMPARE(int(encodeMiniFloat(std::nextafter(fm, 0.0f), format, Overflow::Saturate)), code);
        QCOMPARE(int(encodeMiniFloat(std::nextafter(fm, 1e30f), format, Overflow::Saturate)), next->second);
        checked += 6;
    }
    QVERIFY(checked > 20);
}

void TestFloatFormats::overflow_data() {
    QTest::addColumn<MiniFloat>("format");
    QTest::addColumn<float>("x");
    QTest::addColumn<int>("saturating");
    QTest::addColumn<int>("nonSaturating");
    const float inf = std::numeric_limits<float>::infinity();
    QTest::addRow("e4m3/464-ties-to-max") << MiniFloat::E4M3FN << 464.0f << 0x7E << 0x7E;
    QTest::addRow("e4m3/above-464-nan") << MiniFloat::E4M3FN << std::nextafter(464.0f, 1e9f) << 0x7E << 0x7F;
    QTest::addRow("e4m3/inf") << MiniFloat::E4M3FN << inf << 0x7E << 0x7F;
    QTest::addRow("e4m3/-inf") << MiniFloat::E4M3FN << -inf << 0xFE << 0xFF;
    QTest::addRow("e5m2/below-61440") << MiniFloat::E5M2 << std::nextafter(61440.0f, 0.0f) << 0x7B << 0x7B;
    QTest::addRow("e5m2/61440-inf") << MiniFloat::E5M2 << 61440.0f << 0x7B << 0x7C;
    QTest::addRow("e5m2/-inf") << MiniFloat::E5M2 << -inf << 0xFB << 0xFC;
    QTest::addRow("e2m1/7-saturates") << MiniFloat::E2M1 << 7.0f << 0x7 << 0x7;
    QTest::addRow("e2m1/inf") << MiniFloat::E2M1 << inf << 0x7 << 0x7;
    QTest::addRow("e2m1/nan-is-plus-6")
        << MiniFloat::E2M1 << std::numeric_limits<float>::quiet_NaN() << 0x7 << 0x7;
}

void TestFloatFormats::overflow() {
    QFETCH(MiniFloat, format);
    QFETCH(float, x);
    QFETCH(int, saturating);
    QFETCH(int, nonSaturating);
    QCOMPARE(int(encodeMiniFloat(x, format, Overflow::Saturate)), saturating);
    QCOMPARE(int(encodeMiniFloat(x, format, Overflow::NonSaturating)), nonSaturating);
}

void TestFloatFormats::specVectors_data() {
    QTest::addColumn<MiniFloat>("format");
    QTest::addColumn<std::vector<float>>("x");
    QTest::addColumn<std::vector<int>>("codes");
    QTest::addRow("e4m3/ties") << MiniFloat::E4M3FN << std::vector<float>{1.0625f, 1.1875f, 17, 19}
                               << std::vector<int>{0x38, 0x3A, 0x58, 0x5A};
    QTest::addRow("e4m3/subnormals") << MiniFloat::E4M3FN
                                     << std::vector<float>{std::ldexp(1.0f, -10), 3 * std::ldexp(1.0f, -11),
                                                           0.0068359375f}
                                     << std::vector<int>{0x00, 0x01, 0x04};
    QTest::addRow("e5m2/ties") << MiniFloat::E5M2 << std::vector<float>{1.125f, 1.375f, 60000}
                               << std::vector<int>{0x3C, 0x3E, 0x7B};
    QTest::addRow("e5m2/subnormals") << MiniFloat::E5M2
                                     << std::vector<float>{std::ldexp(1.0f, -17), 3 * std::ldexp(1.0f, -18)}
                                     << std::vector<int>{0x00, 0x01};
    QTest::addRow("e2m1/positive") << MiniFloat::E2M1
                                   << std::vector<float>{0.25f, 0.26f, 0.75f, 1.25f, 1.75f, 2.5f,
                                                         3.5f,  5.0f,  5.1f,  7,     100}
                                   << std::vector<int>{0, 1, 2, 2, 4, 4, 6, 6, 7, 7, 7};
    QTest::addRow("e2m1/negative") << MiniFloat::E2M1 << std::vector<float>{-0.25f, -2.5f, -5, -7}
                                   << std::vector<int>{0x8, 0xC, 0xE, 0xF};
}

void TestFloatFormats::specVectors() {
    QFETCH(MiniFloat, format);
    QFETCH(std::vector<float>, x);
    QFETCH(std::vector<int>, codes);
    for (std::size_t i = 0; i < x.size(); ++i)
        QCOMPARE(int(encodeMiniFloat(x[i], format, Overflow::Saturate)), codes[i]);
}

void TestFloatFormats::decodeRoundTrips() {
    for (int c = 0; c < 256; ++c) {
        const float v = decodeMiniFloat(std::uint8_t(c), MiniFloat::E4M3FN);
        if (std::isnan(v)) {
            QVERIFY((c & 0x7F) == 0x7F);
            continue;
        }
        QCOMPARE(int(encodeMiniFloat(v, MiniFloat::E4M3FN, Overflow::Saturate)), c);
    }
    for (int c = 0; c < 256; ++c) {
        const float v = decodeMiniFloat(std::uint8_t(c), MiniFloat::E5M2);
        if (!std::isnan(v)) QCOMPARE(int(encodeMiniFloat(v, MiniFloat::E5M2, Overflow::NonSaturating)), c);
    }
}

void TestFloatFormats::halfAndBf16() {
    // Every finite half round-trips through fp32; bf16 rounds to nearest even.
    for (int h = 0; h < 0x10000; ++h) {
        if ((h & 0x7C00) == 0x7C00) continue;
        QCOMPARE(int(floatToHalf(halfToFloat(std::uint16_t(h)))), h);
    }
    QCOMPARE(halfToFloat(0x3C00), 1.0f);
    QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));
    QCOMPARE(int(floatToHalf(65520.0f)), 0x7C00); // rounds to Inf
    QCOMPARE(int(floatToHalf(65519.0f)), 0x7BFF);
    QCOMPARE(int(floatToBf16(qltest::bits(0x3F808000))), 0x3F80); // tie -> even
    QCOMPARE(int(floatToBf16(qltest::bits(0x3F818000))), 0x3F82);
    QCOMPARE(bf16ToFloat(0x3F80), 1.0f);
}

void TestFloatFormats::e8m0() {
    QCOMPARE(decodeE8M0(127), 1.0f);
    QCOMPARE(decodeE8M0(0x81), 4.0f);
    QCOMPARE(decodeE8M0(0), std::ldexp(1.0f, -127));
    QVERIFY(std::isnan(decodeE8M0(0xFF)));
}

QTEST_GUILESS_MAIN(TestFloatFormats)
#include "tst_float_formats.moc"
