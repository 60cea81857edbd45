// The cuda backend's statistics passes (cuda_statistics.h), run on the host over emulated grids
// (every thread, several grid sizes, blocks merged in block order as the backend merges them, the
// host side of cuda_statistics_merge.h included) against the scalar oracle (analyzeReference):
// counts, histograms, extremes and the grid exactly equal, sums within backends/README.md's tolerance. Inputs
// hold NaN, ±Inf, zeros, clipped values and every input width. Built on every machine, CUDA or not.
#include "accumulator_checks.h"
#include "backend_test_util.h"
#include "cuda/cuda_plan.h"
#include "cuda/cuda_statistics_merge.h"
#include "cuda_walk_rows.h"
#include "quant/calibration.h"

#include <QtTest>
#include <cmath>
#include <limits>
#include <random>

using namespace ql;
using namespace ql::cuda;
using namespace qltest;

namespace {

constexpr std::int64_t kBlockThreads = 64; // an emulated block: two warps, merged as the kernel merges

// The kernels' layouts (cuda_walk_rows.h) that keep one-byte codes and calibrate on their own (the
// device's statistics leave int32 codes and empty tensors to the host; npu_group_quant's offset is
// the user's).
std::vector<WalkRow> statisticsRows() {
    std::vector<WalkRow> rows;
    for (WalkRow& r : walkRows()) {
        const ResolvedSpec plan = resolveSpec(r.spec, r.shape);
        const bool empty = elementCount(r.shape) == 0; // no launch: the host's pass (cuda_backend.cpp)
        if (!empty && plan.codeTarget != Target::Int32 && !(plan.scalarZeroPoint && !plan.spec.symmetric))
            rows.push_back(std::move(r));
    }
    return rows;
}

// Values on several scales, with zeros, NaN, ±Inf, and a tail the parameters of the clean values
// clip (they come from calibrating the first half only).
std::vector<float> testValues(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        float v = normal(rng) * (1.0f + static_cast<float>(i % 5));
        if (i % 97 == 3) v = 0.0f;
        if (i % 211 == 7) v = std::numeric_limits<float>::quiet_NaN();
        if (i % 307 == 11) v = (i % 2 ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
        if (i % 13 == 5) v *= 40.0f;
        x[static_cast<std::size_t>(i)] = v;
    }
    return x;
}

// The oracle's parameters, from the values with the outliers left out (so the outliers clip).
QuantParams clippingParams(const ResolvedSpec& plan, std::vector<float> x) {
    for (std::size_t i = 0; i < x.size(); ++i)
        if (i % 13 == 5 || !std::isfinite(x[i])) x[i] = 0.5f;
    return calibrate(plan, x);
}

// The passes over an emulated grid of `threads` threads, as the backend runs and merges them.
template <class In>
TensorAccumulators emulateStatistics(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                                     const std::vector<In>& x, const StatisticsRequest& request,
                                     std::int64_t threads) {
    const AnalysisOptions& opt = request.options;
    const auto n = static_cast<std::int64_t>(x.size());
    const std::size_t rows = std::min(opt.groupRows, params.scales.size());
    TensorAccumulators result;
    TensorAnalysis& a = result.analysis;
    a = detail::beginAnalysis(plan, params, codes, n, rows);
    const HostScaleMap map = buildScaleMap(plan);
    StatisticsArgs args = statisticsArgs(hostArgs(plan, map, params, n), codes.data(), plan, rows);
    configureLaunch(args.walk, threads, 1);

    std::vector<BlockSums> blocks;
    std::vector<std::int64_t> codeCounts(256, 0);
    GroupClipping* kept = a.clipping.groupData();
    for (std::int64_t first = 0; first < threads; first += kBlockThreads) {
        BlockSums block = emptyBlockSums();
        for (std::int64_t t = first; t < first + kBlockThreads; ++t) {
            BlockSums mine = emptyBlockSums();
            firstPassStrided(
                x.data(), args, t, threads, static_cast<int>(t % 32), mine,
                [&](std::uint8_t code) { ++codeCounts[code]; },
                [&](bool valid, std::int64_t group, const GroupClipping& c) {
                    if (valid) kept[group].merge(c);
                });
            mergeBlockSums(block, mine);
        }
        blocks.push_back(block);
    }
    finishFirstPass(a, plan.codeTarget, blocks, codeCounts);
    detail::openHistograms(a, plan, params, opt);

    const std::vector<double> logEdges = a.absErrorLog.edges();
    placeBins(args, a, logEdges.data());
    const HistogramSlots counters = slotsOf(a);
    std::vector<std::int64_t> slotCounts(static_cast<std::size_t>(counters.total()), 0);
    for (std::int64_t t = 0; t < threads; ++t)
        secondPassStrided(x.data(), args, counters, t, threads,
                          [&](int slot) { ++slotCounts[static_cast<std::size_t>(slot)]; });
    finishSecondPass(a, slotCounts);
    detail::finishAnalysis(a, plan, params, widestGroup(plan, params), opt);
    return result;
}

std::vector<Bf16> asBf16(const std::vector<float>& x, std::vector<float>& widened) {
    std::vector<Bf16> out(x.size());
    widened.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        out[i] = Bf16{static_cast<std::uint16_t>(bitsOf(x[i]) >> 16)}; // truncation: any bf16 will do
        widened[i] = widen(out[i]);
    }
    return out;
}

} // namespace

class TestCudaStatistics : public QObject {
    Q_OBJECT

private slots:
    void binPlacementMatchesHistogram();
    void passesMatchTheOracle_data();
    void passesMatchTheOracle();
    void keptRowsAndBinsFollowTheRequest();
};

// The placement a device pass uses puts every value where Histogram::add does, edges included.
void TestCudaStatistics::binPlacementMatchesHistogram() {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    for (auto scale : {Histogram::Scale::Linear, Histogram::Scale::Log10}) {
        const double lo = scale == Histogram::Scale::Log10 ? 1e-6 : -2.5;
        Histogram h(lo, 2.5, 60, scale), placed(lo, 2.5, 60, scale);
        const BinPlacement p = placed.placement();
        std::vector<std::int64_t> bins(60, 0);
        std::int64_t under = 0, over = 0, nan = 0;
        std::vector<double> values = h.edges(); // every edge exactly
        for (int i = 0; i < 20000; ++i)
            values.push_back(scale == Histogram::Scale::Log10 ? std::pow(10.0, u(rng) * 2) : u(rng));
        values.push_back(std::numeric_limits<double>::quiet_NaN());
        values.push_back(0.0);
        values.push_back(-1e300);
        values.push_back(1e300);
        for (double v : values) {
            h.add(v);
            const std::int64_t slot = p.slotOf(v);
            if (slot >= 0)
                ++bins[static_cast<std::size_t>(slot)];
            else
                ++(slot == BinPlacement::kNan ? nan : slot == BinPlacement::kUnder ? under : over);
        }
        placed.addCounts(bins, under, over, nan);
        QCOMPARE(placed.counts(), h.counts());
        QCOMPARE(placed.underflow(), h.underflow());
        QCOMPARE(placed.overflow(), h.overflow());
        QCOMPARE(placed.nanCount(), h.nanCount());
    }
}

void TestCudaStatistics::passesMatchTheOracle_data() {
    QTest::addColumn<int>("row");
    QTest::addColumn<bool>("bf16");
    const std::vector<WalkRow> rows = statisticsRows();
    QVERIFY(rows.size() >= 40); // the grid must not shrink unnoticed
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (bool bf16 : {false, true})
            QTest::addRow("%s %s %s", rows[r].name, toString(rows[r].shape).c_str(), bf16 ? "bf16" : "f32")
                << static_cast<int>(r) << bf16;
}

void TestCudaStatistics::passesMatchTheOracle() {
    QFETCH(int, row);
    QFETCH(bool, bf16);
    const WalkRow r = statisticsRows()[static_cast<std::size_t>(row)];
    const ResolvedSpec plan = resolveSpec(r.spec, r.shape);
    const std::vector<float> values = testValues(elementCount(r.shape), static_cast<unsigned>(row) + 1);
    std::vector<float> x = values;
    std::vector<Bf16> stored;
    if (bf16) stored = asBf16(values, x);
    const QuantParams params = clippingParams(plan, x);
    const Codes codes = quantizeReference(plan, params, x);
    const StatisticsRequest request;
    const TensorAccumulators want = accumulateReference(plan, params, codes, x, request);
    if (elementCount(r.shape) > 13) // an outlier among the values: something clips
        QVERIFY(want.analysis.clipping.total().clippedLow + want.analysis.clipping.total().clippedHigh > 0);
    for (std::int64_t threads : {std::int64_t{64}, std::int64_t{192}, std::int64_t{4096}}) {
        const TensorAccumulators got = bf16 ? emulateStatistics(plan, params, codes, stored, request, threads)
                                            : emulateStatistics(plan, params, codes, x, request, threads);
        compareAccumulators(got, want);
        if (QTest::currentTestFailed())
            qWarning("with %lld emulated threads", static_cast<long long>(threads));
        if (QTest::currentTestFailed()) return;
    }
}

// A run that keeps few clipping rows gets those rows and the whole total; other bin counts give
// other edges, the same as the oracle's.
void TestCudaStatistics::keptRowsAndBinsFollowTheRequest() {
    QuantSpec spec = calibratedSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0});
    const Shape shape{40, 96};
    const ResolvedSpec plan = resolveSpec(spec, shape);
    const std::vector<float> x = testValues(elementCount(shape), 9);
    const QuantParams params = clippingParams(plan, x);
    const Codes codes = quantizeReference(plan, params, x);
    StatisticsRequest request;
    request.options.groupRows = 3;
    request.options.errorBins = 7;
    request.options.absErrorBins = 11;
    request.options.valueBins = 5;
    const TensorAccumulators want = accumulateReference(plan, params, codes, x, request);
    const TensorAccumulators got = emulateStatistics(plan, params, codes, x, request, 128);
    QCOMPARE(got.analysis.clipping.groups().size(), std::size_t{3});
    QCOMPARE(got.analysis.clipping.groupCount(), std::size_t{40});
    compareAccumulators(got, want);
}

QTEST_APPLESS_MAIN(TestCudaStatistics)
#include "tst_cuda_statistics.moc"
