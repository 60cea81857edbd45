// The cuda backend's kernel body (cuda_walk.h) and its element -> scale mapping (cuda_scale_map.h),
// run on the host: the fast divide against '/', the cursor against ScaleIndexer for every mapping
// rule, and the whole body over emulated grids (vectors, row carries, scalar tail, every thread)
// against quantizeReference. Built on every machine, with or without CUDA.
#include "backend_test_util.h"
#include "cuda/cuda_plan.h"
#include "cuda/cuda_range.h"
#include "cuda/cuda_range_params.h"
#include "cuda_walk_rows.h"
#include "quant/calibration.h"
#include "quant/range_rule.h"
#include "quant/reference.h"
#include "tensor/float_formats.h"

#include <QtTest>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>

using namespace ql;
using namespace ql::cuda;
using namespace qltest;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> walkValues(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 2.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = i % 2 ? d(rng) : std::round(d(rng) * 32.0f) / 32.0f;
    const float specials[] = {
        std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, -0.0f, 1e30f, 3e-39f, 0x1p60f, -0x1p63f};
    for (std::size_t k = 0; k < std::size(specials) && 7 * k + 3 < v.size(); ++k)
        v[7 * k + 3] = specials[k];
    return v;
}

// Input storage the way a job uploads it, and the f32 values core widens it to.
template <class In> std::vector<In> storeAs(const std::vector<float>& v, std::vector<float>& widened) {
    std::vector<In> out(v.size());
    widened.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_same_v<In, float>) {
            out[i] = v[i];
            widened[i] = v[i];
        } else if constexpr (std::is_same_v<In, Bf16>) {
            out[i] = Bf16{floatToBf16(v[i])};
            widened[i] = bf16ToFloat(out[i].bits);
        } else {
            out[i] = Half{floatToHalf(v[i])};
            widened[i] = halfToFloat(out[i].bits);
        }
    }
    return out;
}

// Runs the kernel body for every thread of an emulated grid and returns the codes.
template <class In, class Code>
Codes emulateKernel(const ResolvedSpec& plan, const QuantParams& params, const std::vector<In>& x,
                    std::int64_t threads) {
    const HostScaleMap map = buildScaleMap(plan);
    QuantizeArgs a = hostArgs(plan, map, params, static_cast<std::int64_t>(x.size()));
    if (a.count > 0) configureLaunch(a, threads, kVectorWidth<In>);
    Codes codes(plan.codeTarget, a.count, Codes::Uninitialized{});
    if (a.count == 0) return codes; // the backend launches nothing either
    auto* out = reinterpret_cast<Code*>(codes.data());
    withScaleOp(a.op.scaleOp, [&](auto op) {
        for (std::int64_t t = 0; t < threads; ++t)
            quantizeStrided<decltype(op)::value>(x.data(), out, a, t, threads);
    });
    return codes;
}

// Calibrated parameters; npu_group_quant's one offset is the user's to give, so it gets one here.
QuantParams paramsFor(const ResolvedSpec& plan, const std::vector<float>& x) {
    if (!plan.scalarZeroPoint || plan.spec.symmetric) return calibrate(plan, x);
    QuantSpec symmetric = plan.spec;
    symmetric.symmetric = true;
    symmetric.calibration.method = CalibMethod::AbsMax;
    QuantParams p = calibrate(resolveSpec(symmetric, plan.shape), x);
    p.zeroPoints = {-1.5f};
    return p;
}

template <class In>
QString walkMismatch(const ResolvedSpec& plan, const std::vector<float>& values, std::int64_t threads) {
    std::vector<float> widened;
    const std::vector<In> stored = storeAs<In>(values, widened);
    const QuantParams params = paramsFor(plan, widened);
    const Codes want = quantizeReference(plan, params, widened);
    const Codes got = plan.codeTarget == Target::Int32
                          ? emulateKernel<In, std::int32_t>(plan, params, stored, threads)
                          : emulateKernel<In, std::uint8_t>(plan, params, stored, threads);
    if (got.size() != want.size())
        return QStringLiteral("code count %1, want %2").arg(got.size()).arg(want.size());
    for (std::int64_t i = 0; i < want.size(); ++i)
        if (got.at(i) != want.at(i))
            return QStringLiteral("element %1 (x=%2): got %3, reference %4")
                .arg(i)
                .arg(double(widened[static_cast<std::size_t>(i)]), 0, 'g', 9)
                .arg(got.at(i))
                .arg(want.at(i));
    return {};
}

template <class T> struct InputType { using type = T; };

// fn(InputType<In>{}) for the device input type of `dtype` (f32, bf16 or f16 bits).
template <class Fn> auto withInputType(DType dtype, Fn&& fn) {
    switch (dtype) {
    case DType::BF16:
        return fn(InputType<Bf16>{});
    case DType::F16:
        return fn(InputType<Half>{});
    default:
        return fn(InputType<float>{});
    }
}

// Every group's range from the range kernel's body over an emulated grid (each lane joins its range
// on its own here; the device's warp reduction joins the same values), turned into parameters by
// the step the backend runs (paramsFromRanges).
template <class In>
QuantParams emulateRanges(const ResolvedSpec& plan, const std::vector<In>& x, std::int64_t threads) {
    const HostScaleMap map = buildScaleMap(plan);
    QuantizeArgs a{};
    a.map = map.hostView();
    a.count = static_cast<std::int64_t>(x.size());
    configureLaunch(a, threads, kVectorWidth<In>);
    std::vector<std::int32_t> lo(static_cast<std::size_t>(plan.scaleCount)), hi = lo;
    auto join = [&](std::int64_t g, std::int32_t l, std::int32_t h) {
        lo[static_cast<std::size_t>(g)] = std::min(lo[static_cast<std::size_t>(g)], l);
        hi[static_cast<std::size_t>(g)] = std::max(hi[static_cast<std::size_t>(g)], h);
    };
    for (std::int64_t t = 0; t < threads; ++t)
        rangeStrided(
            x.data(), a, t, threads, static_cast<int>(t % 32),
            [&](bool valid, std::int64_t g, std::int32_t l, std::int32_t h) {
                if (valid)
                    join(g, l, h);
                else if (l != 0 || h != 0)
                    throw std::logic_error("a lane past the end carries a range");
            },
            join);
    std::vector<float> low(lo.size()), high(hi.size());
    for (std::size_t g = 0; g < lo.size(); ++g) {
        low[g] = fromRangeKey(lo[g]);
        high[g] = fromRangeKey(hi[g]);
    }
    return paramsFromRanges(plan, low, high);
}

template <class In>
QString rangeMismatch(const ResolvedSpec& plan, const std::vector<float>& values, std::int64_t threads) {
    std::vector<float> widened;
    const std::vector<In> stored = storeAs<In>(values, widened);
    const QuantParams want = calibrate(plan, widened);
    const QuantParams got = emulateRanges(plan, stored, threads);
    if (got.scales.size() != want.scales.size()) return QStringLiteral("scale count differs");
    if (got.scaleCodes != want.scaleCodes) return QStringLiteral("block scale codes differ");
    if (bitsOf(got.tensorScale) != bitsOf(want.tensorScale))
        return QStringLiteral("tensor scale %1, calibrate's %2")
            .arg(double(got.tensorScale))
            .arg(double(want.tensorScale));
    for (std::size_t g = 0; g < want.scales.size(); ++g)
        if (bitsOf(got.scales[g]) != bitsOf(want.scales[g]) ||
            (!want.zeroPoints.empty() && got.zeroPoints[g] != want.zeroPoints[g]))
            return QStringLiteral("group %1: scale %2, calibrate's %3")
                .arg(g)
                .arg(double(got.scales[g]), 0, 'g', 9)
                .arg(double(want.scales[g]), 0, 'g', 9);
    return {};
}

} // namespace

class TestCudaWalk : public QObject {
    Q_OBJECT
private slots:
    void fastDivide();
    void cursorMatchesScaleIndexer_data();
    void cursorMatchesScaleIndexer();
    void kernelBodyMatchesReference_data();
    void kernelBodyMatchesReference();
    void vectorsShareScaleWhereTheyCan();
    void rangeKeysKeepFloatOrder();
    void rangeBodyMatchesCalibrate_data();
    void rangeBodyMatchesCalibrate();
};

void TestCudaWalk::fastDivide() {
    std::vector<std::uint32_t> divisors;
    for (std::uint32_t d = 1; d <= 300; ++d)
        divisors.push_back(d);
    for (std::uint32_t d :
         {1000u, 4095u, 4096u, 4097u, 65535u, 65536u, 65537u, 1u << 20, (1u << 30) + 1, 0x7FFFFFFFu})
        divisors.push_back(d);
    std::mt19937 rng(5);
    for (std::uint32_t d : divisors) {
        const FastDivide f = FastDivide::of(d);
        std::vector<std::uint32_t> ns;
        for (std::uint32_t n = 0; n < 3000; ++n)
            ns.push_back(n);
        for (std::uint32_t k : {1u, 2u, 3u, 1000u, 0x7FFFFFFFu / d})
            for (std::int64_t delta = -1; delta <= 1; ++delta) {
                const std::int64_t n = static_cast<std::int64_t>(k) * d + delta;
                if (n >= 0 && n < 0x80000000LL) ns.push_back(static_cast<std::uint32_t>(n));
            }
        for (int i = 0; i < 2000; ++i)
            ns.push_back(static_cast<std::uint32_t>(rng()) & 0x7FFFFFFFu);
        ns.push_back(0x7FFFFFFFu);
        for (std::uint32_t n : ns)
            if (f.divide(n) != n / d)
                QFAIL(qPrintable(QStringLiteral("%1 / %2: got %3").arg(n).arg(d).arg(f.divide(n))));
    }
}

void TestCudaWalk::cursorMatchesScaleIndexer_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    for (const WalkRow& r : walkRows())
        QTest::addRow("%s/%s", r.name, toString(r.shape).c_str()) << r.spec << r.shape;
}

// Cursor::at for every element, next() across every row end, and jump() by grid strides that are
// below, equal to and above a row, all equal to ScaleIndexer::scaleIndexOf.
void TestCudaWalk::cursorMatchesScaleIndexer() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    const ResolvedSpec plan = resolveSpec(spec, shape);
    const HostScaleMap map = buildScaleMap(plan);
    const ScaleMapView view = map.hostView();
    const ScaleIndexer indexer(plan.layout, plan.shape);
    const std::int64_t n = elementCount(shape);
    if (n == 0) return; // no element, nothing is launched
    Cursor walk = Cursor::at(0, view);
    for (std::int64_t i = 0; i < n; ++i) {
        QCOMPARE(Cursor::at(i, view).scaleIndex(view), indexer.scaleIndexOf(i));
        QCOMPARE(walk.scaleIndex(view), indexer.scaleIndexOf(i));
        walk.next(view);
    }
    for (std::int64_t stride :
         {std::int64_t{1}, std::int64_t{3}, map.inner, map.inner + 5, 4 * map.inner - 1}) {
        QuantizeArgs a{};
        a.map = view;
        configureLaunch(a, stride, 1);
        for (std::int64_t start = 0; start < std::min<std::int64_t>(n, stride); ++start) {
            Cursor c = Cursor::at(start, view);
            for (std::int64_t i = start + stride; i < n; i += stride) {
                c.jump(a.strideRows, a.strideCols, view);
                c.base = view.rowStart(c.row);
                QCOMPARE(c.scaleIndex(view), indexer.scaleIndexOf(i));
            }
        }
    }
}

void TestCudaWalk::kernelBodyMatchesReference_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("threads");
    for (const WalkRow& r : walkRows())
        for (DType dt : {DType::F32, DType::BF16, DType::F16})
            for (int threads : {1, 5, 64})
                QTest::addRow("%s/%s/%s/%d-threads", r.name, toString(r.shape).c_str(),
                              std::string(nameOf(dt)).c_str(), threads)
                    << r.spec << r.shape << int(dt) << threads;
}

// The kernel body as the device runs it (vectors, row carries, scalar tail, every thread of a grid)
// against the reference on the same widened values and the same calibrated parameters.
void TestCudaWalk::kernelBodyMatchesReference() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(int, dtype);
    QFETCH(int, threads);
    const ResolvedSpec plan = resolveSpec(spec, shape);
    const auto values = walkValues(elementCount(shape), 11);
    const QString mismatch = withInputType(static_cast<DType>(dtype), [&](auto in) {
        return walkMismatch<typename decltype(in)::type>(plan, values, threads);
    });
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

// The one-lookup-per-vector path is taken exactly where every vector lies in one scale group (the
// codes of both paths are checked above; this checks which one the common layouts get).
void TestCudaWalk::vectorsShareScaleWhereTheyCan() {
    using P = Preset;
    using T = Target;
    using S = Scheme;
    QuantSpec g16 = calibratedSpec(P::Custom, T::Int4, S::PerGroup, {-1});
    g16.groupSize = 16;
    QuantSpec g6 = g16;
    g6.groupSize = 6;
    const struct {
        const char* name;
        QuantSpec spec;
        Shape shape;
        int width;
        bool shares;
    } cases[] = {
        {"per-tensor, ragged rows", calibratedSpec(P::Torch, T::Int8, S::PerTensor, {}), {33, 129}, 4, true},
        {"per-row", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0}), {8, 64}, 8, true},
        {"per-row, rows not whole vectors",
         calibratedSpec(P::Torch, T::Int8, S::PerChannel, {0}),
         {8, 66},
         4,
         false},
        {"per-group 16", g16, {8, 64}, 8, true},
        {"per-group 6", g6, {8, 60}, 4, false},
        {"mx blocks of 32", calibratedSpec(P::MX, T::Fp8E4M3, S::Block, {}), {4, 96}, 8, true},
        {"per-column", calibratedSpec(P::Torch, T::Int8, S::PerChannel, {-1}), {8, 64}, 4, false},
    };
    for (const auto& c : cases) {
        const HostScaleMap map = buildScaleMap(resolveSpec(c.spec, c.shape));
        QuantizeArgs a{};
        a.map = map.hostView();
        configureLaunch(a, 256, c.width);
        QVERIFY2(a.vectorsShareScale == c.shares, c.name);
    }
}

// The keys order floats as their values (±0 alike) and turn back into the same float.
void TestCudaWalk::rangeKeysKeepFloatOrder() {
    const float ordered[] = {-std::numeric_limits<float>::max(),
                             -0x1p63f,
                             -1.5f,
                             -1e-30f,
                             -3e-39f,
                             0.0f,
                             3e-39f,
                             1e-30f,
                             1.0f,
                             0x1p60f,
                             std::numeric_limits<float>::max()};
    for (std::size_t i = 0; i < std::size(ordered); ++i) {
        QCOMPARE(bitsOf(fromRangeKey(rangeKey(ordered[i]))), bitsOf(ordered[i]));
        if (i > 0) QVERIFY(rangeKey(ordered[i - 1]) < rangeKey(ordered[i]));
    }
    QCOMPARE(rangeKey(-0.0f), 0);
    std::int32_t lo = 0, hi = 0;
    for (float x : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN()})
        addToRange(x, lo, hi);
    QCOMPARE(lo, 0);
    QCOMPARE(hi, 0);
}

void TestCudaWalk::rangeBodyMatchesCalibrate_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("threads");
    std::vector<WalkRow> rows = walkRows();
    QuantSpec g128 = calibratedSpec(Preset::Custom, Target::Int4, Scheme::PerGroup, {-1});
    g128.groupSize = 128;
    rows.push_back({"custom/per-group-g128/int4", g128, {40, 1024}});
    rows.push_back(
        {"mx/fp8-e4m3", calibratedSpec(Preset::MX, Target::Fp8E4M3, Scheme::Block, {}), {24, 256}});
    rows.push_back({"torch/per-channel0/uint8-minmax",
                    calibratedSpec(Preset::Torch, Target::UInt8, Scheme::PerChannel, {0}, false),
                    {70, 520}});
    rows.back().spec.calibration.method = CalibMethod::MinMax;
    int added = 0;
    for (const WalkRow& r : rows) {
        const ResolvedSpec plan = resolveSpec(r.spec, r.shape);
        if (!rangeCalibrated(plan) || elementCount(r.shape) == 0) continue;
        const HostScaleMap map = buildScaleMap(plan);
        for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
            if (!vectorsShareScale(map.hostView(), dt == DType::F32 ? 4 : 8))
                continue; // the host calibrates those
            for (int threads : {32, 96, 256}) {
                QTest::addRow("%s/%s/%s/%d-threads", r.name, toString(r.shape).c_str(),
                              std::string(nameOf(dt)).c_str(), threads)
                    << r.spec << r.shape << int(dt) << threads;
                ++added;
            }
        }
    }
    QVERIFY2(added >= 100, qPrintable(QString::number(added))); // the grid must not shrink unnoticed
}

// The ranges the device measures give calibrate's parameters, bit for bit, whatever the grid:
// NaN, ±Inf, -0, subnormals and huge values included (walkValues).
void TestCudaWalk::rangeBodyMatchesCalibrate() {
    QFETCH(QuantSpec, spec);
    QFETCH(Shape, shape);
    QFETCH(int, dtype);
    QFETCH(int, threads);
    const ResolvedSpec plan = resolveSpec(spec, shape);
    const auto values = walkValues(elementCount(shape), 12);
    const QString mismatch = withInputType(static_cast<DType>(dtype), [&](auto in) {
        return rangeMismatch<typename decltype(in)::type>(plan, values, threads);
    });
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

QTEST_GUILESS_MAIN(TestCudaWalk)
#include "tst_cuda_walk.moc"
