// The fast calibrators (calibrateFast) against the scalar oracle (calibrate): the same scales, zero
// points, block codes and note bit for bit, over presets x layouts x methods x dtypes x data with
// ties, NaN/Inf, zeros, subnormals and constant groups, for several thread counts.
#include "quant/calibration.h"
#include "quant/calibration_scan.h"
#include "quant/calibration_search.h"
#include "quant_test_util.h"

#include <QTest>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

using namespace ql;

namespace {

struct Case {
    QuantSpec spec;
    Shape shape;
};

std::vector<float> makeData(const QString& kind, std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& v : x)
        v = normal(rng);
    if (kind == QLatin1String("constant")) std::fill(x.begin(), x.end(), 0.5f);
    if (kind == QLatin1String("zeros")) std::fill(x.begin(), x.end(), 0.0f);
    if (kind == QLatin1String("subnormal"))
        for (auto& v : x)
            v *= 1e-39f;
    if (kind == QLatin1String("special")) {
        // Ties (quarters), signed zeros, subnormals, NaN, Inf, a few large outliers.
        std::uniform_int_distribution<int> pick(0, 19);
        for (auto& v : x) {
            switch (pick(rng)) {
            case 0:
                v = std::nanf("");
                break;
            case 1:
                v = (rng() & 1) ? INFINITY : -INFINITY;
                break;
            case 2:
                v = (rng() & 1) ? 0.0f : -0.0f;
                break;
            case 3:
                v = 3e-41f;
                break;
            case 4:
                v *= 30.0f;
                break;
            default:
                v = std::round(v * 4.0f) / 4.0f;
            }
        }
    }
    return x;
}

// The input bytes of `dtype` and the values the oracle sees (the same numbers, widened).
struct Encoded {
    std::vector<std::byte> bytes;
    std::vector<float> values;
};

Encoded encode(const std::vector<float>& x, DType dtype, bool misalign) {
    Encoded e;
    const std::size_t width = dtype == DType::F32 ? 4 : 2, shift = misalign ? 1 : 0;
    e.bytes.resize(x.size() * width + shift);
    for (std::size_t i = 0; i < x.size(); ++i) {
        float v = x[i];
        if (dtype == DType::F32) {
            std::memcpy(e.bytes.data() + shift + 4 * i, &v, 4);
        } else {
            const std::uint16_t h = dtype == DType::BF16 ? floatToBf16(v) : floatToHalf(v);
            std::memcpy(e.bytes.data() + shift + 2 * i, &h, 2);
            v = dtype == DType::BF16 ? bf16ToFloat(h) : halfToFloat(h);
        }
        e.values.push_back(v);
    }
    return e;
}

std::vector<std::uint32_t> bitsOf(const std::vector<float>& v) {
    std::vector<std::uint32_t> out;
    out.reserve(v.size());
    for (float f : v)
        out.push_back(std::bit_cast<std::uint32_t>(f));
    return out;
}

QuantSpec make(Preset p, Target t, Scheme s, std::vector<int> axes, bool symmetric) {
    auto spec = qltest::spec(p, t, s, std::move(axes), symmetric);
    spec.calibration.method = CalibMethod::AbsMax;
    return spec;
}

std::vector<std::pair<QString, Case>> cases() {
    std::vector<std::pair<QString, Case>> out;
    const auto add = [&](const char* name, QuantSpec s, Shape shape) {
        out.emplace_back(QString::fromLatin1(name), Case{std::move(s), std::move(shape)});
    };
    add("torch/int8/per-tensor", make(Preset::Torch, Target::Int8, Scheme::PerTensor, {}, true), {48, 96});
    add("torch/int8/axis0", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}, true), {48, 96});
    add("torch/int8/axis1", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {1}, true), {48, 96});
    add("torch/uint8/per-tensor", make(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false), {48, 96});
    add("torch/uint8/axis1", make(Preset::Torch, Target::UInt8, Scheme::PerChannel, {1}, false), {48, 96});
    // Columns long enough for the percentile tails, over more than one strip (the last one short),
    // and columns of a 3-D tensor's last axis (rows over both leading axes).
    add("torch/int8/axis1-long", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {1}, true),
        {1024, 40});
    add("torch/uint8/3d-axis2", make(Preset::Torch, Target::UInt8, Scheme::PerChannel, {2}, false),
        {4, 64, 24});
    // A middle axis (an RNN's [directions, gates x hidden, input]): spans of a row, long enough for the
    // tails; and spans of three values, two groups to a strip.
    add("torch/int8/3d-axis1-rows", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {1}, true),
        {4, 16, 256});
    add("torch/uint8/3d-axis1-short", make(Preset::Torch, Target::UInt8, Scheme::PerChannel, {1}, false),
        {16, 12, 3});
    add("torch/int8/3d-axis0", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}, true), {3, 8, 40});
    add("torch/uint8/3d-axis1", make(Preset::Torch, Target::UInt8, Scheme::PerChannel, {1}, false),
        {3, 8, 40});
    auto block2d = make(Preset::TensorRT, Target::Int8, Scheme::Block, {}, true);
    block2d.block = {16, 32};
    add("tensorrt/int8/block16x32", block2d, {48, 96});
    auto blockRow = make(Preset::TensorRT, Target::Int4, Scheme::Block, {1}, true);
    blockRow.block = {32};
    add("tensorrt/int4/block32", blockRow, {48, 96});
    add("tensorrt/int4/axis0-long", make(Preset::TensorRT, Target::Int4, Scheme::PerChannel, {0}, true),
        {4, 1024});
    add("tensorrt/fp8/per-tensor", make(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor, {}, true),
        {48, 96});
    add("tensorrt/int8/tiny", make(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, true), {1, 32});
    // One-element tensors (a [1]-shaped branch scale, a 1x1 weight): every search on one value.
    add("tensorrt/int8/one-element", make(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, true), {1});
    add("torch/int8/one-element-axis0", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}, true),
        {1});
    add("torch/uint8/one-element", make(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false), {1});
    add("torch/int8/one-by-one-axis1", make(Preset::Torch, Target::Int8, Scheme::PerChannel, {1}, true),
        {1, 1});
    add("tensorrt/fp8/one-element", make(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor, {}, true),
        {1});
    add("ascend/int8/axis1", make(Preset::AscendQuant, Target::Int8, Scheme::PerChannel, {1}, true),
        {48, 96});
    auto sqrt = make(Preset::AscendQuant, Target::Int8, Scheme::PerChannel, {1}, true);
    sqrt.sqrtMode = true;
    add("ascend/int8/sqrt", sqrt, {48, 96});
    auto group = make(Preset::Custom, Target::Int8, Scheme::PerGroup, {0}, true);
    group.groupSize = 7; // a short last group
    group.rounding = Rounding::Floor;
    add("custom/int8/group7-axis0-floor", group, {48, 96});
    auto group1d = make(Preset::Custom, Target::UInt8, Scheme::PerGroup, {}, false);
    group1d.groupSize = 64;
    add("custom/uint8/1d-group64", group1d, {1000});
    auto ragged = make(Preset::Custom, Target::UInt8, Scheme::Ragged, {0}, false);
    ragged.groupEnds = {5, 5, 20, 48}; // an empty group
    add("custom/uint8/ragged", ragged, {48, 96});
    add("mx/fp8/last-axis", make(Preset::MX, Target::Fp8E4M3, Scheme::Block, {}, true), {48, 96});
    add("mx/fp4/axis0-short", make(Preset::MX, Target::Fp4E2M1, Scheme::Block, {0}, true), {48, 96});
    add("nvfp4/last-axis", make(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {}, true), {48, 96});
    return out;
}

} // namespace

class TestCalibrationFast : public QObject {
    Q_OBJECT
private slots:
    void fastEqualsOracle_data();
    void fastEqualsOracle();
    void otherDtypesAreRefused();
    void percentileIsExactKthValue();
    void percentileTailsMatchTheOracle();
    void entropySearchMatchesDirectKl();
    void boundsWalkedFromAnyStart();
    void notesFlagWreckingRanges();
    void halfWidening();
    void miniFloatCodecMatchesLibrary();
    void blockMseNeverLosesToTheRule();
};

void TestCalibrationFast::fastEqualsOracle_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    QTest::addColumn<QString>("data");
    QTest::addColumn<int>("dtype");
    const std::vector<std::pair<const char*, DType>> dtypes{
        {"f32", DType::F32}, {"bf16", DType::BF16}, {"f16", DType::F16}};
    for (const auto& [name, c] : cases()) {
        const bool blocks = c.spec.preset == Preset::MX || c.spec.preset == Preset::NVFP4;
        std::vector<std::pair<QString, Calibration>> methods;
        const auto method = [&](const char* n, CalibMethod m, double p = 99.99) {
            methods.emplace_back(QString::fromLatin1(n), Calibration{m, p});
        };
        if (blocks) {
            method("absmax", CalibMethod::AbsMax);
            method("mse", CalibMethod::Mse);
        } else if (c.spec.symmetric) {
            method("absmax", CalibMethod::AbsMax);
            method("p99.9", CalibMethod::Percentile, 99.9);
            method("p50", CalibMethod::Percentile, 50.0);
            method("p100", CalibMethod::Percentile, 100.0);
            method("mse", CalibMethod::Mse);
            method("entropy", CalibMethod::Entropy);
        } else {
            method("minmax", CalibMethod::MinMax);
            method("p99", CalibMethod::Percentile, 99.0);
            method("p37.5", CalibMethod::Percentile, 37.5);
            method("mse", CalibMethod::Mse);
        }
        for (const auto& [mname, cal] : methods)
            for (const char* data : {"gauss", "special", "constant", "zeros", "subnormal"})
                for (const auto& [dname, dt] : dtypes) {
                    QuantSpec s = c.spec;
                    s.calibration = cal;
                    QTest::addRow("%s/%s/%s/%s", qPrintable(name), qPrintable(mname), data, dname)
                        << s << c.shape << QString::fromLatin1(data) << static_cast<int>(dt);
                }
    }
}

void TestCalibrationFast::fastEqualsOracle() {
    QFETCH(QuantSpec, spec);
    QFETCH(std::vector<std::int64_t>, shape);
    QFETCH(QString, data);
    QFETCH(int, dtype);
    const ResolvedSpec plan = resolveSpec(spec, shape);
    const auto x = makeData(data, elementCount(shape), 7);
    for (bool misalign : {false, true}) {
        const Encoded in = encode(x, static_cast<DType>(dtype), misalign);
        const QuantParams want = calibrate(plan, in.values);
        for (unsigned threads : {1u, 2u, 5u}) {
            const QuantParams got =
                calibrateFast(plan, in.bytes.data() + (misalign ? 1 : 0), static_cast<DType>(dtype), threads);
            QCOMPARE(bitsOf(got.scales), bitsOf(want.scales));
            QCOMPARE(bitsOf(got.zeroPoints), bitsOf(want.zeroPoints));
            QCOMPARE(got.scaleCodes, want.scaleCodes);
            QCOMPARE(std::bit_cast<std::uint32_t>(got.tensorScale),
                     std::bit_cast<std::uint32_t>(want.tensorScale));
            QCOMPARE(got.calibrationNote, want.calibrationNote);
        }
    }
}

void TestCalibrationFast::otherDtypesAreRefused() {
    const auto plan = resolveSpec(make(Preset::Torch, Target::Int8, Scheme::PerTensor, {}, true), {4});
    const std::uint8_t bytes[4] = {1, 2, 3, 4};
    QVERIFY_THROWS_EXCEPTION(QuantError, calibrateFast(plan, bytes, DType::F8E4M3, 1));
}

void TestCalibrationFast::percentileIsExactKthValue() {
    // Many duplicates and both signs; the k-th value by a full sort, per-tensor (streaming path) and
    // per-channel (run path), symmetric and asymmetric.
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> small(-300, 300);
    std::vector<float> x(64 * 1024);
    for (auto& v : x)
        v = static_cast<float>(small(rng)) / 8.0f;
    for (double p : {0.1, 12.5, 50.0, 99.0, 99.9, 100.0}) {
        auto s = make(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false);
        s.calibration = {CalibMethod::Percentile, p};
        const auto plan = resolveSpec(s, {64, 1024});
        std::vector<float> sorted = x;
        std::sort(sorted.begin(), sorted.end());
        const auto k = [&](double q) {
            return sorted[static_cast<std::size_t>(percentileRank(static_cast<std::int64_t>(x.size()), q))];
        };
        const auto step = stepForRange({k(100.0 - p), k(p)}, plan);
        const auto got = calibrateFast(plan, x.data(), DType::F32, 2);
        QCOMPARE(got.scales[0], operatorScaleFromStep(step.step, plan.convention));
        QCOMPARE(got.zeroPoints[0], step.zeroPoint);
        s.scheme = Scheme::PerChannel;
        s.axes = {0};
        const auto perChannel = resolveSpec(s, {64, 1024});
        QCOMPARE(bitsOf(calibrateFast(perChannel, x.data(), DType::F32, 3).scales),
                 bitsOf(calibrate(perChannel, x).scales));
    }
}

void TestCalibrationFast::percentileTailsMatchTheOracle() {
    // A percentile near an end of a run is selected from the run's tails (a threshold from a strided
    // sample, then the keys past it). Against the oracle's percentileRange and the radix path: the
    // k-th value, how many values lie past it, and the finite count, on data a sample misjudges
    // (sorted either way, ties, far outliers, non-finite values), for tails from one key to past the
    // bound where the radix path takes over.
    std::mt19937 rng(23);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> pick(0, 99);
    int compared = 0;
    for (const std::int64_t length : {96, 1000, 4096, 5003})
        for (const char* pattern : {"gauss", "ascending", "descending", "ties", "outliers", "nonfinite",
                                    "nan", "negative-nan-blocks"}) {
            std::vector<float> x(static_cast<std::size_t>(length));
            for (auto& v : x)
                v = normal(rng);
            const std::string kind = pattern;
            if (kind == "ascending") std::sort(x.begin(), x.end());
            if (kind == "descending") std::sort(x.rbegin(), x.rend());
            for (auto& v : x) {
                if (kind == "ties") v = std::round(v * 2.0f) / 2.0f;
                if (kind == "outliers" && pick(rng) == 0) v *= 1000.0f;
                if (kind == "nonfinite" && pick(rng) < 30) { // at both ends of the order, either sign
                    const float ends[] = {NAN, -NAN, INFINITY, -INFINITY};
                    v = ends[pick(rng) % 4];
                }
                if (kind == "nan") v = NAN;
            }
            if (kind == "negative-nan-blocks") // stretches of NaN as long as a block, among values below zero
                for (std::size_t i = 0; i < x.size(); ++i)
                    x[i] = (i / 64) % 3 == 1 ? NAN : -1.0f - std::fabs(x[i]);
            for (const double p : {100.0, 99.99, 99.9, 99.0, 98.5, 97.0, 90.0, 1.0, 0.1, 0.0})
                for (const bool symmetric : {true, false}) {
                    std::vector<float> finite;
                    for (float v : x)
                        if (std::isfinite(v)) finite.push_back(v);
                    const GroupClip want = percentileRange(finite, p, symmetric);
                    for (const bool tails : {true, false}) {
                        calib::Tile tile(
                            calib::Input{reinterpret_cast<const std::byte*>(x.data()), DType::F32});
                        std::int64_t count = -1;
                        const GroupClip got =
                            calib::percentileOfRun(tile, 0, length, p, symmetric, tails, count);
                        const QString where = QStringLiteral("%1 × %2, p%3, %4, %5")
                                                  .arg(QLatin1String(pattern))
                                                  .arg(length)
                                                  .arg(p)
                                                  .arg(QLatin1String(symmetric ? "symmetric" : "asymmetric"))
                                                  .arg(QLatin1String(tails ? "tails" : "radix"));
                        QVERIFY2(got.range == want.range, qPrintable(where));
                        QVERIFY2(
                            got.clipped == want.clipped,
                            qPrintable(
                                where +
                                QStringLiteral(": %1 past, oracle %2").arg(got.clipped).arg(want.clipped)));
                        QVERIFY2(count == static_cast<std::int64_t>(finite.size()), qPrintable(where));
                        ++compared;
                    }
                }
        }
    QCOMPARE(compared, 4 * 8 * 10 * 2 * 2);
}

void TestCalibrationFast::entropySearchMatchesDirectKl() {
    // The prefix-sum search against TensorRT's loop written out bin by bin (the previous oracle).
    const auto direct = [](const std::vector<std::uint32_t>& hist, int levels) {
        const int bins = static_cast<int>(hist.size());
        int bestI = bins;
        double bestKl = std::numeric_limits<double>::infinity();
        for (int i = levels; i <= bins; ++i) {
            std::vector<double> p(hist.begin(), hist.begin() + i), q(i, 0.0);
            for (int j = i; j < bins; ++j)
                p[i - 1] += hist[j];
            for (int l = 0; l < levels; ++l) {
                const int b = l * i / levels, e = (l + 1) * i / levels;
                double sum = 0.0;
                int nonEmpty = 0;
                for (int j = b; j < e; ++j) {
                    sum += hist[j];
                    nonEmpty += hist[j] > 0;
                }
                for (int j = b; j < e; ++j)
                    if (hist[j] > 0) q[j] = sum / nonEmpty;
            }
            double ps = 0.0, qs = 0.0;
            for (int j = 0; j < i; ++j) {
                ps += p[j];
                qs += q[j];
            }
            double kl = 0.0;
            for (int j = 0; j < i; ++j) {
                if (p[j] <= 0) continue;
                const double pj = p[j] / ps, qj = q[j] > 0 ? q[j] / qs : 1e-12;
                kl += pj * std::log(pj / qj);
            }
            if (kl < bestKl - 1e-12) {
                bestKl = kl;
                bestI = i;
            }
        }
        return bestI;
    };
    std::mt19937 rng(5);
    for (int trial = 0; trial < 6; ++trial) {
        const int levels = trial < 3 ? 8 : 128;
        const int bins = trial < 3 ? 64 : 512;
        std::normal_distribution<double> normal(0.0, bins / (3.0 + trial));
        std::vector<std::uint32_t> hist(static_cast<std::size_t>(bins), 0);
        for (int k = 0; k < 50 * bins; ++k)
            ++hist[static_cast<std::size_t>(std::min<double>(bins - 1, std::fabs(normal(rng))))];
        hist[static_cast<std::size_t>(bins - 1)] += 3; // outliers
        for (auto& h : hist)
            h *= 1000; // a large group: every threshold is searched, as TensorRT does
        GroupRange g;
        g.hi = 1.0f;
        g.finite = 1000 * (50 * bins + 3);
        const int want = direct(hist, levels);
        const double threshold = entropySearch(g, hist, levels).range.second;
        QCOMPARE(threshold, std::min(1.0, (want + 0.5) / bins));
    }
}

void TestCalibrationFast::boundsWalkedFromAnyStart() {
    // MSE's bounds, walked from the previous candidate's, against std::lower_bound and upper_bound:
    // from every start, on sorted values with repeats, for values on them, between, beyond both
    // ends, infinite and NaN.
    std::mt19937 rng(31);
    std::uniform_int_distribution<int> small(-20, 20);
    for (int trial = 0; trial < 40; ++trial) {
        std::vector<double> v(static_cast<std::size_t>(trial % 9));
        for (auto& x : v)
            x = small(rng) / 4.0;
        std::sort(v.begin(), v.end());
        std::vector<double> probes{-INFINITY, INFINITY, NAN, -6.0, 6.0};
        for (double x : v)
            probes.insert(probes.end(), {x, x + 0.125, std::nextafter(x, -INFINITY)});
        for (const double x : probes)
            for (std::size_t j = 0; j <= v.size(); ++j) {
                QCOMPARE(lowerBoundFrom(v, j, x),
                         static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), x) - v.begin()));
                QCOMPARE(upperBoundFrom(v, j, x),
                         static_cast<std::size_t>(std::upper_bound(v.begin(), v.end(), x) - v.begin()));
            }
    }
}

void TestCalibrationFast::notesFlagWreckingRanges() {
    const auto x = makeData(QStringLiteral("gauss"), 64 * 128, 3);
    auto s = make(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, true);
    s.calibration = {CalibMethod::Percentile, 99.9};
    QVERIFY(calibrate(resolveSpec(s, {64, 128}), x).calibrationNote.empty());
    s.calibration = {CalibMethod::Percentile, 90.0};
    const auto clipping = calibrate(resolveSpec(s, {64, 128}), x).calibrationNote;
    QVERIFY2(clipping.find("clips 10.0% of the values") != std::string::npos, clipping.c_str());
    // Entropy on a [1, 32] tensor: too few values for a histogram, so absmax and a note saying why.
    s.calibration = {CalibMethod::Entropy, 99.99};
    const std::vector<float> tiny(x.begin(), x.begin() + 32);
    const auto plan = resolveSpec(s, {1, 32});
    const auto p = calibrate(plan, tiny);
    auto absmax = s;
    absmax.calibration.method = CalibMethod::AbsMax;
    QCOMPARE(p.scales, calibrate(resolveSpec(absmax, {1, 32}), tiny).scales);
    QVERIFY2(p.calibrationNote.find("at least 4096 values") != std::string::npos, p.calibrationNote.c_str());
    QVERIFY(calibrate(resolveSpec(absmax, {1, 32}), tiny).calibrationNote.empty());
    // int32's 2^30 + 1 levels: twice that does not fit an int, and the fallback must still be taken.
    auto wide = s;
    wide.preset = Preset::Torch;
    wide.target = Target::Int32;
    const auto pw = calibrate(resolveSpec(wide, {1, 32}), tiny);
    auto wideAbsmax = wide;
    wideAbsmax.calibration.method = CalibMethod::AbsMax;
    QCOMPARE(pw.scales, calibrate(resolveSpec(wideAbsmax, {1, 32}), tiny).scales);
    QVERIFY2(!pw.calibrationNote.empty(), "no note for int32's fallback");
}

void TestCalibrationFast::halfWidening() {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const float want = halfToFloat(static_cast<std::uint16_t>(h)),
                    got = calib::halfBitsToFloat(static_cast<std::uint16_t>(h));
        if (std::isnan(want)) {
            QVERIFY(std::isnan(got));
            continue;
        }
        QCOMPARE(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want));
    }
}

void TestCalibrationFast::miniFloatCodecMatchesLibrary() {
    // Every float whose low 16 bits are 0, 1 or 0xFFFF: the formats' ties (and one ulp either side)
    // at every exponent, subnormals, overflow and non-finite values.
    for (MiniFloat f : {MiniFloat::E4M3FN, MiniFloat::E5M2, MiniFloat::E2M1})
        for (Overflow o : {Overflow::Saturate, Overflow::NonSaturating}) {
            const MiniFloatCodec codec(f, o);
            for (std::uint32_t hi = 0; hi < 0x10000; ++hi)
                for (std::uint32_t lo : {0x0000u, 0x0001u, 0xFFFFu}) {
                    const float x = std::bit_cast<float>((hi << 16) | lo);
                    if (codec.encode(x) != encodeMiniFloat(x, f, o))
                        QFAIL(qPrintable(QStringLiteral("%1 -> %2, library %3")
                                             .arg(double(x))
                                             .arg(codec.encode(x))
                                             .arg(encodeMiniFloat(x, f, o))));
                }
            for (int c = 0; c < 256; ++c) {
                const float want = decodeMiniFloat(static_cast<std::uint8_t>(c), f);
                QVERIFY(std::isnan(want) ? std::isnan(codec.decode(static_cast<std::uint8_t>(c)))
                                         : codec.decode(static_cast<std::uint8_t>(c)) == want);
            }
        }
}

void TestCalibrationFast::blockMseNeverLosesToTheRule() {
    // The rule's code is one of the candidates, so every block's error is at most the rule's.
    const auto x = makeData(QStringLiteral("special"), 48 * 96, 9);
    for (Preset preset : {Preset::MX, Preset::NVFP4}) {
        auto s = make(preset, Target::Fp4E2M1, Scheme::Block, {}, true);
        const auto rulePlan = resolveSpec(s, {48, 96});
        s.calibration.method = CalibMethod::Mse;
        const auto msePlan = resolveSpec(s, {48, 96});
        const auto rule = calibrate(rulePlan, x), mse = calibrate(msePlan, x);
        const auto backRule = dequantizeReference(rulePlan, rule, quantizeReference(rulePlan, rule, x));
        const auto backMse = dequantizeReference(msePlan, mse, quantizeReference(msePlan, mse, x));
        const std::int64_t block = preset == Preset::MX ? 32 : 16;
        int better = 0;
        for (std::size_t b = 0; b < x.size() / static_cast<std::size_t>(block); ++b) {
            double er = 0, em = 0;
            for (std::size_t i = b * block; i < (b + 1) * block; ++i) {
                if (!std::isfinite(x[i])) continue;
                er += (double(x[i]) - backRule[i]) * (double(x[i]) - backRule[i]);
                em += (double(x[i]) - backMse[i]) * (double(x[i]) - backMse[i]);
            }
            if (std::isnan(er)) continue; // an MX block holding a NaN: scale 0xFF either way
            QVERIFY2(em <= er, qPrintable(QStringLiteral("block %1: %2 > %3").arg(b).arg(em).arg(er)));
            better += em < er;
        }
        QVERIFY(better > 0);
    }
}

QTEST_GUILESS_MAIN(TestCalibrationFast)
#include "tst_calibration_fast.moc"
