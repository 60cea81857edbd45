#pragma once
// The mixed-precision planner: measure every selected weight under each candidate format
// (the target operator's arithmetic, on the request's backend), then choose one format per weight
// minimising the total (importance-weighted) squared error under a bits budget (plan_solver.h).
//
// Bits are what a compressed-tensors export of the plan stores for the weight, exactly: its codes
// (packed), scales and zero points (and NVFP4's global scale); "keep" stores the weight as it is.
// Every candidate is therefore one that format can store, and the plan exports as it was measured.
#include "job/job.h"
#include "job/plan_solver.h"

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ql {

struct PlanCandidate {
    std::string name;              // "int4-g128"
    std::optional<QuantSpec> spec; // none: kept as stored
    std::string ggmlType; // the nearest llama.cpp type for --tensor-type (none for keep: the weight's own)
    bool ggmlSameLayout =
        false; // that type stores the same codes and scales (its quantizer rounds its own way)
    /// Each weight takes its role's axes (quant/weight_role.h): a candidate whose spec names no axis.
    /// False: the spec's axes apply to every weight as given, and fail those they do not fit.
    bool roleAxes = true;
};
/// The plan `candidate` quantizes a weight of `role` and `shape` with: the role's rule (quant/weight_view.h
/// planForRole: its axes, or a conv's [O, I*kh*kw] view) or the spec's own axes. Throws QuantError.
ResolvedSpec planOfCandidate(const PlanCandidate& candidate, const RoleAxes& role, const Shape& shape);
/// The formats the planner tries unless told otherwise, in order of size.
std::vector<PlanCandidate> defaultPlanCandidates();
/// Throws QuantError naming the unknown name and the known ones.
std::vector<PlanCandidate> planCandidatesNamed(const std::vector<std::string>& names);

/// One weight under one candidate.
struct PlanCell {
    std::int64_t bits = -1; // -1: not available (why says so)
    double error = NAN;     // squared error summed over the weight: importance-weighted when weighted
    double sqnrDb = NAN;    // plain SQNR, for display
    std::string why;
    nlohmann::json compressedTensors; // {"format", "weights"}: the config group this choice joins
    /// Why compressed-tensors cannot store this choice (a conv's layout, an ONNX MatMul's [in, out]):
    /// its bits are then what QuantLens's native layout stores, and `--out` cannot write it.
    std::string noCompressedTensors;
};

struct PlanTensor {
    std::string name;
    Shape shape;
    DType dtype = DType::F32;
    std::int64_t elements = 0;
    std::string role;            // its role and axes in words (describe(RoleAxes))
    bool weighted = false;       // its error is weighted by an importance entry
    std::string note;            // importance: where its weights came from, or why none
    std::vector<PlanCell> cells; // one per candidate
};

struct PlanMeasurements {
    std::string file;
    std::string importance; // the importance file, empty: plain squared error
    /// What the cells' errors measure when it is the model's outputs (PlanScope::outputError), in
    /// words; empty: the weights' own squared error.
    std::string outputObjective;
    std::vector<PlanCandidate> candidates;
    std::vector<PlanTensor> tensors;                             // the weights planned
    std::vector<std::pair<std::string, std::string>> notPlanned; // name, why (kept as they are)
    std::int64_t elements() const;
};

struct PlanScope {
    /// Plan biases, norms and scale vectors too (notAWeight): by default only weights are planned.
    bool includeNonWeights = false;
    /// Only choices a compressed-tensors checkpoint stores (for an export): the others are unavailable.
    bool compressedTensorsOnly = false;
    /// The output objective: a cell's error is this function of the weight and its values quantized
    /// then dequantized by the candidate (the model's output error with only that weight quantized),
    /// not the weight's squared error. `objective` says what it measures, in words.
    std::function<double(const TensorInfo&, const std::vector<float>&)> outputError = {};
    std::string objective = {};
};

/// Why measurePlan keeps `info` as it is (not a weight, an embedding table, ...); empty: it plans it.
std::string whyNotPlanned(const TensorSource& source, const TensorInfo& info, const PlanScope& scope);

/// Measures each candidate on each selected tensor, one tensor at a time, each along its role's axes
/// (any name, any layout: Linear, conv, recurrent, stacked). Tensors that are not weights (biases,
/// norms, scalars; see PlanScope), embedding tables, integer and empty tensors are listed as not
/// planned with the reason. Throws Cancelled; QuantError when no selected tensor can be planned;
/// everything else is per cell.
PlanMeasurements measurePlan(const JobRequest& request, const std::vector<std::string>& tensors,
                             const std::vector<PlanCandidate>& candidates, const ModelEvents& events = {},
                             const PlanScope& scope = {});

struct PlanBudget {
    double bitsPerWeight = 0; // > 0: average over the planned weights
    std::int64_t bytes = 0;   // > 0: total bytes of the planned weights
};

struct PlanResult {
    std::int64_t budgetBits = 0;
    PlanSolution solution;
    std::vector<FrontPoint> front;
    double bitsPerWeight(const PlanMeasurements& m) const;
};
/// Throws QuantError for an impossible budget (naming the smallest plan's bits per weight).
/// `front`: the measurements' front when the caller has it (it does not depend on the budget, so a
/// page that re-plans as the budget moves computes it once); otherwise computed here.
PlanResult choosePlan(const PlanMeasurements& m, const PlanBudget& budget,
                      std::optional<std::vector<FrontPoint>> front = std::nullopt);
/// The error-vs-bits front of the measurements (whatever the budget).
std::vector<FrontPoint> planFrontOf(const PlanMeasurements& m);

} // namespace ql
