#pragma once
// One tensor through plan -> backend (codes and statistics) -> report, the step every job repeats
// (internal to core/job).
#include "backend/backend.h"
#include "io/tensor_source.h"
#include "report/report.h"
#include "tensor/values_view.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ql {

/// A tensor's values as the backend and the analysis take them: the file's bytes in place for f32,
/// bf16 and f16 (a memory mapping: no copy; copied once only where the file misaligns them),
/// converted to f32 once for every other dtype.
class LoadedTensor {
public:
    LoadedTensor(const TensorSource& source, const TensorInfo& info);
    LoadedTensor(const LoadedTensor&) = delete; // the view may point into this object
    LoadedTensor& operator=(const LoadedTensor&) = delete;

    const TensorInfo& info() const { return m_info; }
    /// How the model's graph uses it, where the file says (its role's input: quant/weight_role.h).
    const std::optional<WeightUse>& use() const { return m_use; }
    const ValuesView& view() const { return m_view; }
    /// The job a backend runs, without its plan: the tensor itself, or the converted values.
    BackendTask job() const;
    /// f32 values for the comparison's examples: in place for f32, else converted once (kept).
    std::span<const float> floats() const;

private:
    TensorInfo m_info;
    std::optional<WeightUse> m_use;
    Tensor m_tensor;
    mutable std::vector<float> m_converted;
    ValuesView m_view;
};

/// The tensor's inventory entry; FileError naming the closest names when the file lacks it.
const TensorInfo& requireTensor(const TensorSource& source, const std::string& name);

struct TensorMeasurement {
    TensorReport report; // plan, parameters, timing and analysis
    Result result;       // the backend's result, codes included
};

class Importance;

struct TensorRunOptions {
    std::optional<QuantParams> params = std::nullopt; // given parameters (else the backend calibrates)
    int repeat = 1;
    ProgressFn progress = {};
    const Importance* importance = nullptr; // with it, the weighted error too
    /// Clipping rows the report keeps (AnalysisOptions::groupRows): a run that keeps only what a
    /// report lists, or only totals, need not hold a row per group. Its report's parameters are
    /// those rows' too (reportedParams); the result keeps them all.
    std::size_t groupRows = ClippingStats::kAllRows;
    /// Without it, the backend fills no statistics: the report's analysis is left empty (codes only).
    bool statistics = true;
    /// Off when only the statistics are needed: the result's codes may come back empty
    /// (StatisticsRequest::keepCodes).
    bool keepCodes = true;
    /// Off when the caller reads the report's params alone: a report that keeps every row takes the
    /// result's params instead of a copy of them (NVFP4's million scales and their codes).
    bool resultParams = true;
};

/// Runs `plan` for the tensor on `backend`, which fills the report's accumulators in its own run unless
/// told not to (with an importance, the weighted error too, or a note why the tensor has none). Throws
/// QuantError (impossible spec, unsupported by the backend, parameters that do not fit) or Cancelled; the
/// caller adds file and tensor to the message.
TensorMeasurement measureTensor(const LoadedTensor& tensor, const ResolvedSpec& plan, const Backend& backend,
                                const TensorRunOptions& options = {});

} // namespace ql
