#include "job/tensor_measurement.h"

#include "base/error.h"
#include "job/importance.h"

#include <cstdint>
#include <cstring>

namespace ql {

LoadedTensor::LoadedTensor(const TensorSource& source, const TensorInfo& info)
    : m_info(info)
    , m_use(source.weightUse(info.name))
    , m_tensor(source.load(info.name)) {
    // A file may place a tensor at any byte (ONNX external data, say): the kernels read whole
    // elements, so a misaligned one is copied to owned, aligned storage once.
    if (const int width = storageBytes(m_tensor.dtype());
        width > 1 && reinterpret_cast<std::uintptr_t>(m_tensor.data()) % static_cast<unsigned>(width) != 0) {
        Tensor aligned(m_tensor.dtype(), m_tensor.shape());
        std::memcpy(aligned.mutableData(), m_tensor.data(), m_tensor.byteSize());
        m_tensor = std::move(aligned);
    }
    if (auto view = ValuesView::of(m_tensor)) {
        m_view = *view;
        return;
    }
    m_converted = m_tensor.toFloatVector();
    m_tensor = Tensor();
    m_view = ValuesView::of(m_converted);
}

BackendTask LoadedTensor::job() const {
    BackendTask job;
    if (m_converted.empty())
        job.tensor = m_tensor;
    else
        job.values = m_converted;
    return job;
}

std::span<const float> LoadedTensor::floats() const {
    const bool aligned = reinterpret_cast<std::uintptr_t>(m_view.data) % alignof(float) == 0;
    if (m_view.dtype == DType::F32 && aligned)
        return {reinterpret_cast<const float*>(m_view.data), static_cast<std::size_t>(m_view.count)};
    if (m_converted.empty()) {
        m_converted.resize(static_cast<std::size_t>(m_view.count));
        for (std::int64_t i = 0; i < m_view.count; ++i)
            m_converted[static_cast<std::size_t>(i)] = m_view.at(i);
    }
    return m_converted;
}

TensorMeasurement measureTensor(const LoadedTensor& tensor, const ResolvedSpec& plan, const Backend& backend,
                                const TensorRunOptions& o) {
    const ProgressFn& progress = o.progress;
    if (auto why = backend.supports(plan))
        throw QuantError("backend " + backend.name() + " cannot run it: " + *why);
    BackendTask job = tensor.job();
    job.plan = plan;
    job.params = o.params;
    job.repeat = o.repeat;
    TensorMeasurement run;
    TensorReport& r = run.report;
    // The backend fills the report's accumulators in its own run; the report only formats them.
    if (o.statistics) {
        StatisticsRequest request;
        request.options.groupRows = o.groupRows;
        request.keepCodes = o.keepCodes;
        if (o.importance) {
            const RoleAxes role = weightRole(tensor.info().name, tensor.info().shape, tensor.use());
            if (auto weights = o.importance->forTensor(tensor.info(), role, r.importanceNote))
                request.importance = ImportanceWeights{weights->sqMean, weights->channels, weights->matrices,
                                                       weights->inner, weights->origin};
        }
        job.statistics = std::move(request);
    }
    run.result = backend.run(job, progress);
    r.name = tensor.info().name;
    r.shape = tensor.info().shape;
    r.dtype = tensor.info().dtype;
    r.plan = run.result.plan;
    r.backend = backend.name();
    // A run that keeps a report's rows only keeps a report's parameters: NVFP4's million scales and
    // their codes (5 MB) are the result's, not copied.
    if (o.groupRows != ClippingStats::kAllRows)
        r.params = reportedParams(run.result.params, o.groupRows);
    else if (o.resultParams)
        r.params = run.result.params;
    else
        r.params = std::move(run.result.params);
    r.timing = run.result.timing;
    if (!o.statistics) return run;
    if (!run.result.statistics)
        throw QuantError("backend " + backend.name() +
                         " returned no statistics for a job that asked for them");
    r.analysis = std::move(run.result.statistics->analysis);
    r.weighted = std::move(run.result.statistics->weighted);
    run.result.statistics.reset();
    return run;
}

} // namespace ql
