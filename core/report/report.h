#pragma once
// Reports: JSON (the stable schema in core/report/report_schema.md) and CSV (one row per tensor).
#include "analysis/analyzer.h"
#include "analysis/comparison.h"
#include "analysis/weighted_error.h"
#include "backend/timing.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "tensor/dtype.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ql {

/// One tensor's result as reported. `error` non-empty means it failed, `passedThrough` non-empty
/// that the spec does not apply to it and it was kept as it is; in both cases only the
/// identification fields are meaningful.
struct TensorReport {
    std::string name;
    Shape shape;
    DType dtype = DType::F32;
    ResolvedSpec plan;
    std::string backend;
    QuantParams params;
    TensorAnalysis analysis;
    Timing timing;
    std::string error;
    std::string passedThrough;
    /// The importance-weighted error, when the run had activation statistics for this tensor;
    /// otherwise `importanceNote` may say why it has none.
    std::optional<WeightedError> weighted;
    std::string importanceNote;

    bool quantized() const { return error.empty() && passedThrough.empty(); }
};

struct ReportOptions {
    /// Per-channel arrays longer than this are cut (the summary still covers every group).
    std::size_t maxGroups = 4096;
};

/// What a report keeps of a run's parameters: the first `maxGroups` scales and zero points, the
/// tensor scale and the calibration note, no block-scale codes. With the analysis keeping rows for
/// the same groups (AnalysisOptions::groupRows), a whole-model run holds each finished tensor's
/// report in bounded memory.
QuantParams reportedParams(const QuantParams& p, std::size_t maxGroups);

nlohmann::json toJson(const TensorReport& r, const ReportOptions& options = {});
nlohmann::json toJson(const Comparison& c);
nlohmann::json toJson(const Histogram& h);
/// The error statistics of a report entry's "stats", with the accumulators they come from.
nlohmann::json errorStatsJson(const ErrorStats& s);
/// {"file": ..., "tensors": [...]} (plus "comparison" when given).
nlohmann::json reportJson(const std::string& file, const std::vector<TensorReport>& tensors,
                          const Comparison* comparison = nullptr, const ReportOptions& options = {});
/// Header plus one row per tensor; the columns are the headline stats and timing.
std::string reportCsv(const std::vector<TensorReport>& tensors);

/// Writes JSON or CSV by the extension of `path` (.json / .csv) through a temporary file renamed
/// into place. Throws FileError naming the path and the reason.
void writeReport(const std::string& path, const std::string& file, const std::vector<TensorReport>& tensors,
                 const Comparison* comparison = nullptr);

/// NaN and ±Inf become null; JSON has no number for them.
nlohmann::json jsonNumber(double v);

} // namespace ql
