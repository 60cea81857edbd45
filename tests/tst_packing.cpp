// Sub-byte packing: torch quint4x2 bytes, Ascend int32 words, compressed-tensors words; round trips.
#include "quant/packing.h"
#include "quant_test_util.h"

#include <QTest>
#include <random>

using namespace ql;

namespace {

Codes codesOf(Target t, const std::vector<int>& values) {
    Codes c(t, std::int64_t(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i)
        c.set(std::int64_t(i), values[i]);
    return c;
}

} // namespace

class TestPacking : public QObject {
    Q_OBJECT
private slots:
    void torchQuint4x2Bytes();
    void ascendInt32Words();
    void ascendInt32EndToEnd();
    void compressedTensorsOffsetBinary();
    void roundTrips();
    void oddCountsAndErrors();
};

void TestPacking::torchQuint4x2Bytes() {
    // V-Q14 and V-Q15: even element in the low nibble, over the flattened tensor.
    QCOMPARE(packNibbles(codesOf(Target::UInt4, {0, 1, 2, 4, 15, 15, 0, 8})),
             (std::vector<std::uint8_t>{16, 66, 255, 128}));
    QCOMPARE(packNibbles(codesOf(Target::UInt4, {0, 0, 8, 8, 15, 15, 15, 15})),
             (std::vector<std::uint8_t>{0, 136, 255, 255}));
}

void TestPacking::ascendInt32Words() {
    // V-A8 / V-G2: element 8j+i in bits 4i..4i+3, signed nibbles.
    const auto words = packInt32Words(
        codesOf(Target::Int4, {0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7, -8}), {2, 8});
    QCOMPARE(std::uint32_t(words[0]), 0x76543210u);
    QCOMPARE(std::uint32_t(words[1]), 0x89ABCDEFu);
}

void TestPacking::ascendInt32EndToEnd() {
    auto s = qltest::spec(Preset::AscendQuant, Target::Int32, Scheme::PerTensor);
    const auto plan = resolveSpec(s, {2, 8});
    QCOMPARE(plan.codeTarget, Target::Int4);
    QCOMPARE(plan.packedShape(), (Shape{2, 1}));
    std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7, -8};
    const auto codes = quantizeReference(plan, QuantParams{{1.0f}, {}, {}, 0}, x);
    const auto words = packInt32Words(codes, plan.shape);
    QCOMPARE(std::uint32_t(words[1]), 0x89ABCDEFu);
}

void TestPacking::compressedTensorsOffsetBinary() {
    const auto words = packCompressedTensors(codesOf(Target::Int4, {-8, -1, 0, 7, 1, 2, 3, 4}), {1, 8});
    QCOMPARE(std::uint32_t(words[0]), 0xCBA9F870u);
    // A short row is zero-padded to a whole word per row.
    const auto padded = packCompressedTensors(codesOf(Target::UInt4, {1, 2, 3, 4, 5, 6}), {2, 3});
    QCOMPARE(padded.size(), std::size_t(2));
    QCOMPARE(std::uint32_t(padded[1]), 0x654u);
}

void TestPacking::roundTrips() {
    std::mt19937 rng(7);
    for (auto t : {Target::Int4, Target::UInt4, Target::Fp4E2M1}) {
        const std::int64_t rows = 3, cols = 16;
        Codes c(t, rows * cols);
        for (std::int64_t i = 0; i < c.size(); ++i)
            c.set(i, t == Target::Int4 ? int(rng() % 16) - 8 : int(rng() % 16));
        QCOMPARE(unpackNibbles(packNibbles(c), t, c.size()), c);
        QCOMPARE(unpackCompressedTensors(packCompressedTensors(c, {rows, cols}), {rows, cols}, t), c);
        if (t == Target::Int4) QCOMPARE(unpackInt32Words(packInt32Words(c, {rows, cols}), {rows, cols}), c);
    }
}

void TestPacking::oddCountsAndErrors() {
    const auto bytes = packNibbles(codesOf(Target::UInt4, {1, 2, 3}));
    QCOMPARE(bytes, (std::vector<std::uint8_t>{0x21, 0x03}));
    QCOMPARE(unpackNibbles(bytes, Target::UInt4, 3), codesOf(Target::UInt4, {1, 2, 3}));
    QVERIFY_THROWS_EXCEPTION(QuantError, packInt32Words(codesOf(Target::Int4, {1, 2, 3}), {3}));
    QVERIFY_THROWS_EXCEPTION(QuantError, unpackNibbles(bytes, Target::UInt4, 9));
}

QTEST_GUILESS_MAIN(TestPacking)
#include "tst_packing.moc"
