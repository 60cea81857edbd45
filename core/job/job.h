#pragma once
// The one pipeline every front end runs: a tensor job (one side, or A and
// B compared), a model job (every selected tensor, one at a time) and a sweep job. The CLI prints
// and writes what these return; the GUI's runner turns their callbacks into signals. Neither
// re-runs or re-analyses anything.
//
// Policy, the same for both front ends:
// - a tensor that fails (its parameters do not fit, the backend refuses it) is reported with its
//   reason and the run goes on; the outcome counts it so the caller's exit status can say so;
// - a tensor the spec cannot apply to (an integer or 0-d tensor, a 1-D bias under a 2-D block, a
//   shape a group or block does not fit) is passed through unquantized and listed as such, as
//   llm-compressor's `ignore` does, so an export of the rest is a complete checkpoint;
// - scales from a file on a whole-model run are looked up per tensor by name (`<name>_scale`,
//   `<name>_zero_point`, compressed-tensors naming); a missing one is that tensor's failure.
#include "analysis/comparison.h"
#include "backend/backend.h"
#include "backend/registry.h"
#include "io/export.h"
#include "io/run_files.h"
#include "io/tensor_source.h"
#include "report/report.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ql {

class Importance;

/// Which second run to compare against: none, the same spec on another backend, or another preset.
struct CompareWith {
    enum class Kind { None, Backend, Preset } kind = Kind::None;
    std::string backend;
    Preset preset = Preset::Torch;
};

/// Calibration "file": the operator's scales (and zero points). For one tensor, FILE:TENSOR; for a
/// model run, FILE alone, where each tensor's own `<name>_scale` (`<name>_zero_point`) is read.
struct ParamFiles {
    std::string scales;
    std::string zeroPoints; // empty: none (symmetric)
};

struct JobRequest {
    std::shared_ptr<const TensorSource> source;
    std::shared_ptr<const BackendRegistry> registry;
    QuantSpec spec;
    std::string backend = "cpu";
    CompareWith compare;
    ParamFiles params; // read when spec.calibration.method is Explicit
    /// Activation statistics: reports gain the importance-weighted error (job/importance.h).
    std::shared_ptr<const Importance> importance;
    int repeat = 1;
    /// Only the codes and parameters are wanted (diff's re-quantized side): no statistics pass, and
    /// the reports' analyses are left empty.
    bool codesOnly = false;
    /// No axis was named (the CLI without --axis, Python's axis=None): each tensor
    /// takes its own role's axes (quant/weight_role.h) in place of spec.axes, never another's.
    bool roleAxes = false;
};

/// The role of one listed tensor: its shape and name, and for ONNX the node consuming it.
RoleAxes roleOf(const TensorSource& source, const TensorInfo& info);
/// The spec `spec` (A's, or B's) runs on `info` with: as given, or with request.roleAxes the axes of
/// the tensor's role.
QuantSpec specForTensor(const JobRequest& request, const QuantSpec& spec, const TensorInfo& info);
/// Plans `spec` for `info` as every job does: with request.roleAxes the role's rule (quant/weight_view.h
/// planForRole: the role's axes, or a conv's [O, I*kh*kw] view where only that fits), else the spec as
/// given; a layout whose every block holds one element is refused (degenerateLayout). Throws QuantError
/// with the reason.
ResolvedSpec planForTensor(const JobRequest& request, const QuantSpec& spec, const TensorInfo& info);

/// Lists every file the request reads as an input of `files`: the model (each shard, its index), the
/// importance file, and the scale and zero-point files of calibration "file".
void addRequestInputs(RunFiles& files, const JobRequest& request);
/// Throws FileError, before any work, when an output (path, flag) is or would replace a file the
/// request reads (the model, a shard, the index, the importance or scale file) or another output.
/// `files` may already list more inputs and outputs of the run. Both front ends check every file they
/// write with this.
void refuseOutputsOverInputs(const JobRequest& request,
                             const std::vector<std::pair<std::string, std::string>>& outputs,
                             RunFiles files = {});

/// One side of a run: the report (analysis, timing) and the codes it produced.
struct SideOutcome {
    std::string label;
    TensorReport report;
    Codes codes;
    double bytesIn = 0; // input bytes the backend read, for GB/s
};

struct TensorOutcome {
    SideOutcome a;
    std::optional<SideOutcome> b;
    std::optional<Comparison> comparison;
    /// Where A and B differ, over a coarse grid of the tensor (empty when they agree).
    MismatchMap mismatches;
};

/// Runs one tensor: A, then B when the request compares, then the comparison. Throws QuantError /
/// FileError naming the file and tensor (and the side), or Cancelled.
TensorOutcome runTensorJob(const JobRequest& request, const std::string& tensor,
                           const ProgressFn& progress = {});

/// Which tensors a model run takes: named ones, those whose name contains a regular expression
/// match, or all of them.
struct TensorSelection {
    std::vector<std::string> names;
    std::string match;
    bool all = false;
};
/// The names in file order. Throws FileError for a name the file lacks (with the closest names),
/// QuantError for an invalid expression or when nothing is selected.
std::vector<std::string> selectTensors(const TensorSource& source, const TensorSelection& selection);

struct ModelOutcome {
    std::vector<TensorReport> reports; // every selected tensor, in order: failed and passed-through ones too
    std::vector<QuantizedTensor> quantized; // the successful ones, when the run keeps codes for an export
    std::vector<NamedTensor> kept;          // the passed-through ones as they are, likewise
    int failed = 0;
    int passedThrough = 0;
};

struct ModelEvents {
    /// Before tensor `index` of `total` starts.
    std::function<void(int index, int total, const std::string& tensor)> started;
    /// Within the current tensor, [0, 1]; false cancels.
    ProgressFn progress;
    /// After each tensor, with its report (quantized, failed or passed through).
    std::function<void(const TensorReport&)> finished;
};

struct ModelJobOptions {
    /// Keep every tensor's codes (for an export); otherwise only the current tensor's are held.
    bool keepCodes = false;
    /// Pass through the tensors the spec cannot apply to (a whole-model run). Off when the user
    /// named the tensors: then a spec that does not apply is that tensor's failure.
    bool passThrough = true;
    /// Weights only (a whole-model run's default in the CLI): tensors the role table says are no
    /// weight (quant/weight_role.h notAWeight: biases, norm and scale vectors, scalars) are passed
    /// through with the reason, whatever the spec would do to them.
    bool weightsOnly = false;
    /// For an export: why its layout cannot store a quantized tensor (empty: it can). Such a tensor
    /// is then passed through as one the spec does not apply to (or fails, without passThrough),
    /// so the export and the report agree on what was kept.
    std::function<std::string(const QuantizedTensor&)> unstorable = {};
};

/// Why a compressed-tensors export at `exportPath` cannot store `q` (empty: it can): it quantizes a
/// module's ".weight", in the layouts its dequantization reproduces exactly.
std::string compressedTensorsRefusal(const QuantizedTensor& q, const std::string& exportPath);

/// The export's extras for an outcome: the kept tensors and the failed ones with their reasons.
ExportExtras exportExtras(const ModelOutcome& outcome);

/// Runs the request's spec on every named tensor, one at a time. Throws Cancelled; everything else
/// is per tensor.
ModelOutcome runModelJob(const JobRequest& request, const std::vector<std::string>& tensors,
                         const ModelJobOptions& options = {}, const ModelEvents& events = {});

/// One report per group size that fits; sizes the tensor cannot take are listed in `skipped`.
struct SweepOutcome {
    std::vector<std::int64_t> sizes;
    std::vector<TensorReport> reports;
    std::vector<std::pair<std::int64_t, std::string>> skipped; // size, reason
};
/// Quantizes one tensor with contiguous groups of each size along the spec's axis (default last).
/// Throws FileError for a missing tensor, QuantError when no size fits, Cancelled.
SweepOutcome runSweepJob(const JobRequest& request, const std::string& tensor,
                         const std::vector<std::int64_t>& sizes,
                         const std::function<void(int index, int total)>& started = {},
                         const ProgressFn& progress = {});

/// The values of one tensor before quantization, for the browser's instant preview.
struct ValuePreview {
    std::string tensor;
    Histogram values;
    std::int64_t count = 0;
};
/// Histograms one tensor's finite values (read in place where its dtype allows).
ValuePreview previewValues(const TensorSource& source, const std::string& tensor, int bins = 256);

/// The spec B runs with.
QuantSpec specOfB(const JobRequest& request);
/// "file: tensor: reason", the form of every per-tensor message.
std::string whereIn(const TensorSource& source, const std::string& tensor, const std::string& why);

} // namespace ql
