#include "cuda/cuda_job.h"

#include <vector>

namespace ql::cuda {
namespace {

template <class T> std::size_t bytesOfVector(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}

// Host -> device on the context's stream, straight from pageable memory (which the driver copies
// before the call returns, so the source may go right after).
void copyUp(DeviceContext& context, void* device, const void* host, std::size_t bytes) {
    if (bytes)
        check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, context.stream()),
              "cudaMemcpyAsync(host to device, " + std::to_string(bytes) + " bytes)");
}

} // namespace

DeviceJob::DeviceJob(DeviceContext& context, const ResolvedSpec& plan, const HostScaleMap& map,
                     const HostInput& input)
    : m_context(context)
    , m_map(map)
    , m_codeBytes(static_cast<std::size_t>(input.count) * (plan.codeTarget == Target::Int32 ? 4 : 1)) {
    m_input = context.buffer(BufferRole::Input, input.bytes());
    m_rowBase = context.buffer(BufferRole::RowBase, bytesOfVector(map.rowBase));
    m_columnTable = context.buffer(BufferRole::ColumnTable, bytesOfVector(map.columnTable));
    m_launch.input = m_input;
    m_launch.codes = context.buffer(BufferRole::Codes, m_codeBytes);
    m_launch.kind = input.kind;
    m_launch.wideCodes = plan.codeTarget == Target::Int32;
    QuantizeArgs& a = m_launch.args;
    a.op = elementOpFor(plan);
    a.map = map.view(static_cast<const std::int64_t*>(m_rowBase),
                     static_cast<const std::int32_t*>(m_columnTable));
    a.count = input.count;
}

void DeviceJob::uploadInput(const HostInput& input, unsigned workers, const std::function<void()>& alongside,
                            const Event& landed) {
    copyUp(m_context, m_rowBase, m_map.rowBase.data(), bytesOfVector(m_map.rowBase));
    copyUp(m_context, m_columnTable, m_map.columnTable.data(), bytesOfVector(m_map.columnTable));
    if (Staging::worthStaging(input.bytes()))
        return m_context.staging().upload(m_input, input.data, input.bytes(), workers, alongside, landed);
    copyUp(m_context, m_input, input.data, input.bytes());
    landed.record(m_context.stream());
    if (alongside) alongside();
}

bool DeviceJob::rangesOnDevice() const {
    return vectorsShareScale(m_launch.args.map, 16 / bytesOf(m_launch.kind));
}

void DeviceJob::measureRanges(std::int64_t groups, std::vector<float>& lo, std::vector<float>& hi) {
    const std::size_t bytes = static_cast<std::size_t>(groups) * sizeof(std::int32_t);
    RangeLaunch r{};
    r.input = m_input;
    r.kind = m_launch.kind;
    r.lo = static_cast<std::int32_t*>(m_context.buffer(BufferRole::RangeLow, bytes));
    r.hi = static_cast<std::int32_t*>(m_context.buffer(BufferRole::RangeHigh, bytes));
    r.args = m_launch.args;
    const cudaStream_t stream = m_context.stream();
    check(cudaMemsetAsync(r.lo, 0, bytes, stream), "cudaMemsetAsync");
    check(cudaMemsetAsync(r.hi, 0, bytes, stream), "cudaMemsetAsync");
    check(launchRange(r, stream), "range kernel launch");
    std::vector<std::int32_t> keys(2 * static_cast<std::size_t>(groups));
    check(cudaMemcpyAsync(keys.data(), r.lo, bytes, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync(ranges)");
    check(cudaMemcpyAsync(keys.data() + groups, r.hi, bytes, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync(ranges)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    lo.resize(static_cast<std::size_t>(groups));
    hi.resize(static_cast<std::size_t>(groups));
    for (std::size_t g = 0; g < lo.size(); ++g) {
        lo[g] = fromRangeKey(keys[g]);
        hi[g] = fromRangeKey(keys[lo.size() + g]);
    }
}

void DeviceJob::uploadParams(const QuantParams& params) {
    QuantizeArgs& a = m_launch.args;
    void* scales = m_context.buffer(BufferRole::Scales, bytesOfVector(params.scales));
    void* zeroPoints = m_context.buffer(BufferRole::ZeroPoints, bytesOfVector(params.zeroPoints));
    // Small next to the input (NVFP4's, the largest, are 1/16 of its element count): not staged.
    copyUp(m_context, scales, params.scales.data(), bytesOfVector(params.scales));
    copyUp(m_context, zeroPoints, params.zeroPoints.data(), bytesOfVector(params.zeroPoints));
    a.scales = static_cast<const float*>(scales);
    a.zeroPoints = static_cast<const float*>(zeroPoints);
    a.zeroPointMode = zeroPointModeOf(params);
}

void DeviceJob::launch() {
    check(launchQuantize(m_launch, m_context.stream()), "quantize kernel launch");
}

void DeviceJob::download(void* codes) {
    if (Staging::worthStaging(m_codeBytes))
        return m_context.staging().download(codes, m_launch.codes, m_codeBytes);
    if (m_codeBytes == 0) return;
    check(cudaMemcpyAsync(codes, m_launch.codes, m_codeBytes, cudaMemcpyDeviceToHost, m_context.stream()),
          "cudaMemcpyAsync(device to host, " + std::to_string(m_codeBytes) + " bytes)");
    check(cudaStreamSynchronize(m_context.stream()), "cudaStreamSynchronize");
}

} // namespace ql::cuda
