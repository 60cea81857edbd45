#pragma once
// What one GUI run computes, as plain C++ over the core API (no Qt): load a tensor, plan, run
// on backend A (and B), analyse and compare. The worker thread calls these; pages draw the results.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comparison.h"
#include "analysis/histogram.h"
#include "analysis/report.h"
#include "backend/backend.h"
#include "backend/registry.h"
#include "io/export.h"
#include "io/tensor_source.h"

namespace ql {

/// Which second run to compare against: none, the same spec on another backend, or another preset.
struct CompareWith {
    enum class Kind { None, Backend, Preset } kind = Kind::None;
    std::string backend;
    Preset preset = Preset::Torch;
};

/// Calibration "file": the operator's scales (and zero points) as FILE:TENSOR references.
struct ParamFiles {
    std::string scales;
    std::string zeroPoints; // empty: none (symmetric)
};

struct JobRequest {
    std::shared_ptr<const TensorSource> source;
    std::shared_ptr<const BackendRegistry> registry;
    std::string tensor; // empty for a whole-model run
    QuantSpec spec;
    std::string backend = "cpu";
    CompareWith compare;
    ParamFiles params; // read when spec.calibration.method is Explicit
};

/// One side of a run: the report (analysis, timing) and the codes it produced.
struct SideOutcome {
    std::string label;
    TensorReport report;
    Codes codes;
    double bytesIn = 0; // input bytes (f32) the backend read, for GB/s
};

struct TensorOutcome {
    SideOutcome a;
    std::optional<SideOutcome> b;
    std::optional<Comparison> comparison;
    /// Where A and B differ, over a coarse grid of the tensor (empty when they agree).
    MismatchMap mismatches;
};

struct ModelOutcome {
    std::vector<TensorReport> reports;       // every floating tensor, failures keep their reason
    std::vector<QuantizedTensor> quantized;  // the successful ones, for export
};

/// The values of one tensor before quantization, for the browser's instant preview.
struct ValuePreview {
    std::string tensor;
    Histogram values;
    std::int64_t count = 0;
};

/// Runs one tensor (A, then B when asked, then the comparison). Throws QuantError / FileError with
/// the tensor named, or Cancelled.
TensorOutcome runTensorJob(const JobRequest& request, const ProgressFn& progress);
/// Runs every floating tensor with the request's spec; per-tensor failures are recorded, not thrown.
/// Throws Cancelled.
ModelOutcome runModelJob(const JobRequest& request, const ProgressFn& progress);
/// Loads one tensor and histograms its finite values.
ValuePreview previewValues(const TensorSource& source, const std::string& tensor, int bins = 256);

/// The spec B runs with.
QuantSpec specOfB(const JobRequest& request);
/// The tensor seen as a matrix for maps: [rows, product of the other dims].
std::pair<std::int64_t, std::int64_t> matrixView(const Shape& shape);

} // namespace ql
