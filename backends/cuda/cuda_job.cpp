#include "cuda/cuda_job.h"

#include <algorithm>
#include <vector>

namespace ql::cuda {
namespace {

template <class T> std::size_t bytesOfVector(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}

} // namespace

DeviceJob::DeviceJob(const QuantPlan& plan, const QuantParams& params, const HostScaleMap& map,
                     const HostInput& input, cudaStream_t stream)
    : m_params(params)
    , m_map(map)
    , m_stream(stream)
    , m_input(input.bytes())
    , m_codes(static_cast<std::size_t>(input.count) * (plan.codeTarget == Target::Int32 ? 4 : 1))
    , m_scales(bytesOfVector(params.scales))
    , m_zeroPoints(bytesOfVector(params.zeroPoints))
    , m_rowBase(bytesOfVector(map.rowBase))
    , m_columnTable(bytesOfVector(map.columnTable)) {
    if (StagedCopier::worthStaging(std::max(input.bytes(), m_codes.size())))
        m_staging = std::make_unique<StagedCopier>(stream);
    m_launch.input = m_input.get();
    m_launch.codes = m_codes.get();
    m_launch.kind = input.kind;
    m_launch.wideCodes = plan.codeTarget == Target::Int32;
    QuantizeArgs& a = m_launch.args;
    a.op = elementOpFor(plan);
    a.map = map.view(m_rowBase.as<const std::int64_t>(), m_columnTable.as<const std::int32_t>());
    a.scales = m_scales.as<const float>();
    a.zeroPoints = m_zeroPoints.as<const float>();
    a.zeroPointMode = zeroPointModeOf(params);
    a.count = input.count;
}

void DeviceJob::upload(const HostInput& input) {
    copyToDevice(m_scales.get(), m_params.scales.data(), m_scales.size(), m_stream, nullptr);
    copyToDevice(m_zeroPoints.get(), m_params.zeroPoints.data(), m_zeroPoints.size(), m_stream, nullptr);
    copyToDevice(m_rowBase.get(), m_map.rowBase.data(), m_rowBase.size(), m_stream, nullptr);
    copyToDevice(m_columnTable.get(), m_map.columnTable.data(), m_columnTable.size(), m_stream, nullptr);
    copyToDevice(m_input.get(), input.data, input.bytes(), m_stream,
                 StagedCopier::worthStaging(input.bytes()) ? m_staging.get() : nullptr);
}

void DeviceJob::launch() {
    check(launchQuantize(m_launch, m_stream), "quantize kernel launch");
}

void DeviceJob::download(void* codes) {
    copyToHost(codes, m_codes.get(), m_codes.size(), m_stream,
               StagedCopier::worthStaging(m_codes.size()) ? m_staging.get() : nullptr);
}

} // namespace ql::cuda
