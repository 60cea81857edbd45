// The importance-weighted error sums made a run of elements at a time (WeightedRuns, the fast pass's
// way) against weightedError, the oracle: Linear, conv (input channels with a kernel behind them) and
// a mixture of experts' matrices, runs cut anywhere and taken in any order, with NaN and Inf; and the
// cpu backend's sums, made in its quantize pass, against accumulateReference's.
#include "analysis/accumulators.h"
#include "analysis/weighted_error.h"
#include "base/error.h"
#include "cpu/cpu_backend.h"
#include "quant/resolved_spec.h"
#include "quant_test_util.h"
#include "tensor/float_formats.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace ql;

namespace {

struct WeightLayout {
    const char* name;
    std::int64_t n, channels;
    int matrices;
    std::int64_t inner;
};

bool close(double got, double want) {
    return std::fabs(got - want) <= 1e-12 * std::fabs(want);
}

} // namespace

class TestWeightedRuns : public QObject {
    Q_OBJECT
private slots:
    void runsInAnyOrderMatchTheOracle_data();
    void runsInAnyOrderMatchTheOracle();
    void weightsThatDoNotFitAreRefused();
    void cpuPassWeighsAConv();
    void hostAccumulateWeighsInItsPass();
};

void TestWeightedRuns::runsInAnyOrderMatchTheOracle_data() {
    QTest::addColumn<int>("layout");
    QTest::newRow("linear [48, 64]") << 0;
    QTest::newRow("conv [16, 8, 3, 3]") << 1;
    QTest::newRow("experts [3, 16, 32]") << 2;
}

void TestWeightedRuns::runsInAnyOrderMatchTheOracle() {
    QFETCH(int, layout);
    const WeightLayout layouts[] = {
        {"linear", 48 * 64, 64, 1, 1}, {"conv", 16 * 8 * 9, 8, 1, 9}, {"experts", 3 * 16 * 32, 32, 3, 1}};
    const WeightLayout& l = layouts[layout];
    std::vector<float> x = qltest::normalValues(l.n, 1);
    std::vector<float> xhat = qltest::normalValues(l.n, 2);
    x[7] = std::numeric_limits<float>::quiet_NaN();
    xhat[100] = std::numeric_limits<float>::infinity();
    std::vector<float> s = qltest::normalValues(l.channels * l.matrices, 3);
    for (float& v : s)
        v = std::fabs(v);
    const WeightedError want = weightedError(x, xhat, s, l.channels, l.matrices, l.inner);
    const ImportanceWeights w{s, l.channels, l.matrices, l.inner, "test"};
    // Runs of 1 to 300 elements, cut at random and added in a shuffled order.
    std::mt19937 rng(5);
    std::vector<std::pair<std::int64_t, int>> runs;
    for (std::int64_t at = 0; at < l.n;) {
        const int len = static_cast<int>(std::min<std::int64_t>(1 + rng() % 300, l.n - at));
        runs.emplace_back(at, len);
        at += len;
    }
    std::shuffle(runs.begin(), runs.end(), rng);
    WeightedRuns got(w, l.n);
    for (const auto& [first, len] : runs) {
        const auto at = static_cast<std::size_t>(first);
        const bool finite = std::all_of(x.begin() + first, x.begin() + first + len,
                                        [](float v) { return std::isfinite(v); }) &&
                            std::all_of(xhat.begin() + first, xhat.begin() + first + len,
                                        [](float v) { return std::isfinite(v); });
        got.add(x.data() + at, xhat.data() + at, len, first, finite);
    }
    QCOMPARE(got.sums.count, want.count);
    QCOMPARE(got.sums.count, l.n - 2);
    QVERIFY2(close(got.sums.sumWeightedSqError, want.sumWeightedSqError),
             qPrintable(QString::number(got.sums.sumWeightedSqError - want.sumWeightedSqError)));
    QVERIFY(close(got.sums.sumWeightedSqX, want.sumWeightedSqX));
}

void TestWeightedRuns::weightsThatDoNotFitAreRefused() {
    const std::vector<float> s(10, 1.0f);
    QVERIFY_THROWS_EXCEPTION(QuantError, checkImportanceFits({s, 10, 1, 3, "t"}, 100)); // 100 % 30
    QVERIFY_THROWS_EXCEPTION(QuantError, checkImportanceFits({s, 5, 1, 1, "t"}, 100));  // 10 values for 5
    checkImportanceFits({s, 10, 1, 2, "t"}, 100);
}

// A conv [O, I, 3, 3] weighs each input channel's 9 kernel values alike: the backend's pass, slice by
// slice on two threads, agrees with the oracle's single run; a misfit is refused before any work.
void TestWeightedRuns::cpuPassWeighsAConv() {
    const Shape shape{64, 32, 3, 3};
    const std::vector<float> x = qltest::normalValues(64 * 32 * 9, 9);
    std::vector<float> s = qltest::normalValues(32, 10);
    for (float& v : s)
        v = v * v;
    QuantSpec spec; // torch per-channel int8 along the output channels
    BackendTask job;
    job.plan = resolveSpec(spec, shape);
    job.values = x;
    job.statistics = StatisticsRequest{};
    job.statistics->importance = ImportanceWeights{s, 32, 1, 9, "test: conv"};
    const Result got = CpuBackend(2, 1 << 12).run(job, {});
    QVERIFY(got.statistics && got.statistics->weighted);
    const TensorAccumulators want = accumulateReference(job.plan, got.params, got.codes, x, *job.statistics);
    QCOMPARE(got.statistics->weighted->count, want.weighted->count);
    QCOMPARE(got.statistics->weighted->importance, std::string("test: conv"));
    QVERIFY(std::fabs(got.statistics->weighted->sumWeightedSqError - want.weighted->sumWeightedSqError) <=
            1e-10 * want.weighted->sumWeightedSqError);
    QVERIFY(std::fabs(got.statistics->weighted->sumWeightedSqX - want.weighted->sumWeightedSqX) <=
            1e-10 * want.weighted->sumWeightedSqX);
    job.statistics->importance->inner = 7; // 32 · 7 does not divide the tensor
    QVERIFY_THROWS_EXCEPTION(QuantError, CpuBackend(2).run(job, {}));
}

// The host accumulate() (a backend whose device hands back codes) makes the weighted sums in its one
// vector pass, and accumulateWeighted() in one read a block at a time: both agree with the oracle for
// a conv large enough for the fast pass, a small one the oracle measures, and a bf16 input.
void TestWeightedRuns::hostAccumulateWeighsInItsPass() {
    for (const Shape& shape : {Shape{64, 32, 3, 3}, Shape{4, 8, 3, 3}}) {
        const std::int64_t n = elementCount(shape), in = shape[1];
        std::vector<float> x = qltest::normalValues(n, 11);
        x[5] = std::numeric_limits<float>::quiet_NaN(); // left out of the sums, as the oracle leaves it
        std::vector<float> s = qltest::normalValues(in, 12);
        for (float& v : s)
            v = v * v;
        BackendTask job;
        job.plan = resolveSpec(QuantSpec{}, shape);
        job.values = x;
        const Result codes = CpuBackend(2, 1 << 12).run(job, {});
        StatisticsRequest request;
        request.options.threads = 2;
        request.importance = ImportanceWeights{s, in, 1, 9, "test: host"};
        const TensorAccumulators want = accumulateReference(job.plan, codes.params, codes.codes, x, request);
        const TensorAccumulators got =
            accumulate(job.plan, codes.params, codes.codes, ValuesView::of(x), request);
        const WeightedError alone =
            accumulateWeighted(job.plan, codes.params, codes.codes, ValuesView::of(x), *request.importance);
        for (const WeightedError& w : {*got.weighted, alone}) {
            QCOMPARE(w.count, want.weighted->count);
            QCOMPARE(w.importance, std::string("test: host"));
            QVERIFY2(close(w.sumWeightedSqError, want.weighted->sumWeightedSqError) &&
                         close(w.sumWeightedSqX, want.weighted->sumWeightedSqX),
                     qPrintable(QStringLiteral("%1 vs %2")
                                    .arg(w.sumWeightedSqError)
                                    .arg(want.weighted->sumWeightedSqError)));
        }
        QCOMPARE(got.analysis.stats.count(), want.analysis.stats.count());
        // A bf16 input read in place: the same sums as its values widened to f32.
        std::vector<std::uint16_t> stored(x.size());
        std::vector<float> widened(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            stored[i] = floatToBf16(x[i]);
            widened[i] = bf16ToFloat(stored[i]);
        }
        const ValuesView bf16{reinterpret_cast<const std::byte*>(stored.data()), DType::BF16, n};
        const WeightedError fromBf16 =
            accumulateWeighted(job.plan, codes.params, codes.codes, bf16, *request.importance);
        const WeightedError fromWidened = accumulateWeighted(job.plan, codes.params, codes.codes,
                                                             ValuesView::of(widened), *request.importance);
        QCOMPARE(fromBf16.sumWeightedSqError, fromWidened.sumWeightedSqError);
        QCOMPARE(fromBf16.sumWeightedSqX, fromWidened.sumWeightedSqX);
    }
    StatisticsRequest misfit;
    std::vector<float> s(7, 1.0f);
    misfit.importance = ImportanceWeights{s, 7, 1, 9, "test: misfit"};
    const std::vector<float> x = qltest::normalValues(64 * 32 * 9, 13);
    BackendTask job;
    job.plan = resolveSpec(QuantSpec{}, Shape{64, 32, 3, 3});
    job.values = x;
    const Result codes = CpuBackend(2).run(job, {});
    QVERIFY_THROWS_EXCEPTION(QuantError,
                             accumulate(job.plan, codes.params, codes.codes, ValuesView::of(x), misfit));
    // Values that do not fit the codes' tensor are refused, never read past their end (288 fewer: the
    // weights still fit them, so only the sizes can refuse).
    const std::vector<float> fewer(x.begin(), x.end() - 288), s32(32, 1.0f);
    const ImportanceWeights fits{s32, 32, 1, 9, "test: fewer"};
    checkImportanceFits(fits, static_cast<std::int64_t>(fewer.size()));
    QVERIFY_THROWS_EXCEPTION(
        QuantError, accumulateWeighted(job.plan, codes.params, codes.codes, ValuesView::of(fewer), fits));
}

QTEST_GUILESS_MAIN(TestWeightedRuns)
#include "tst_weighted_runs.moc"
