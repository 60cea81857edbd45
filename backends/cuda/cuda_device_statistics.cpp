#include "cuda/cuda_device_statistics.h"

#include "cuda/cuda_statistics_launch.h"
#include "cuda/cuda_statistics_merge.h"

#include <algorithm>
#include <vector>

namespace ql::cuda {
namespace {

template <class T>
void download(std::vector<T>& host, const void* device, std::size_t count, cudaStream_t stream) {
    host.resize(count);
    if (count)
        check(cudaMemcpyAsync(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync(statistics)");
}

void* zeroed(DeviceContext& context, BufferRole role, std::size_t bytes) {
    void* p = context.buffer(role, bytes);
    if (bytes) check(cudaMemsetAsync(p, 0, bytes, context.stream()), "cudaMemsetAsync(statistics)");
    return p;
}

} // namespace

bool statisticsOnDevice(const ResolvedSpec& plan, const StatisticsRequest& request) {
    const AnalysisOptions& o = request.options;
    const HistogramSlots counters{std::max(o.errorBins, 1), std::max(o.absErrorBins, 1),
                                  std::max(o.valueBins, 1)};
    return plan.codeTarget != Target::Int32 && counters.total() <= kMaxHistogramSlots;
}

TensorAccumulators deviceStatistics(DeviceContext& context, const DeviceTensors& t, const ResolvedSpec& plan,
                                    const QuantParams& params, const Codes& codes,
                                    const StatisticsRequest& request) {
    const AnalysisOptions& opt = request.options;
    const std::int64_t n = t.args.count;
    const std::size_t rows = std::min(opt.groupRows, params.scales.size());
    TensorAccumulators result;
    TensorAnalysis& a = result.analysis;
    a = detail::beginAnalysis(plan, params, codes, n, rows);
    const cudaStream_t stream = context.stream();

    // Pass one: error sums, clipping, code counts.
    FirstPassLaunch first{
        t.input, t.kind, statisticsArgs(t.args, t.codes, plan, rows), firstPassBlocks(n), nullptr,
        nullptr, nullptr};
    if (first.blocks == 0) throw QuantError("cuda: the statistics kernel's grid could not be sized");
    first.blocksOut = static_cast<BlockSums*>(
        context.buffer(BufferRole::StatisticsBlocks, first.blocks * sizeof(BlockSums)));
    first.codeCounts =
        static_cast<std::int64_t*>(zeroed(context, BufferRole::StatisticsCodes, 256 * sizeof(std::int64_t)));
    first.rows = static_cast<GroupClipping*>(
        zeroed(context, BufferRole::StatisticsRows, rows * sizeof(GroupClipping)));
    check(launchFirstPass(first, stream), "statistics kernel launch (first pass)");
    std::vector<BlockSums> blocks;
    std::vector<std::int64_t> codeCounts;
    download(blocks, first.blocksOut, first.blocks, stream);
    download(codeCounts, first.codeCounts, 256, stream);
    if (rows)
        check(cudaMemcpyAsync(a.clipping.groupData(), first.rows, rows * sizeof(GroupClipping),
                              cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync(clipping rows)");
    const std::int64_t gridGroup = widestGroup(plan, params); // on the host while the device counts
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(statistics)");

    finishFirstPass(a, plan.codeTarget, blocks, codeCounts);

    // Pass two: the histograms, on the edges the plan and params give.
    detail::openHistograms(a, plan, params, opt);
    SecondPassLaunch second{t.input, t.kind, first.args, slotsOf(a), nullptr};
    const std::vector<double> logEdges = a.absErrorLog.edges();
    void* edges = context.buffer(BufferRole::StatisticsEdges, logEdges.size() * sizeof(double));
    check(cudaMemcpyAsync(edges, logEdges.data(), logEdges.size() * sizeof(double), cudaMemcpyHostToDevice,
                          stream),
          "cudaMemcpyAsync(histogram edges)");
    placeBins(second.args, a, static_cast<const double*>(edges));
    second.slotCounts = static_cast<std::int64_t*>(
        zeroed(context, BufferRole::StatisticsSlots,
               static_cast<std::size_t>(second.counters.total()) * sizeof(std::int64_t)));
    check(launchSecondPass(second, stream), "statistics kernel launch (second pass)");
    std::vector<std::int64_t> slotCounts;
    download(slotCounts, second.slotCounts, static_cast<std::size_t>(second.counters.total()), stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(statistics)");
    finishSecondPass(a, slotCounts);
    detail::finishAnalysis(a, plan, params, gridGroup, opt);
    return result;
}

} // namespace ql::cuda
