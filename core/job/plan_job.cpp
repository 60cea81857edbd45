#include "job/plan_job.h"

#include "base/error.h"
#include "io/export_compressed_tensors.h"
#include "io/export_tensors.h"
#include "job/importance.h"
#include "job/tensor_measurement.h"
#include "quant/reference.h"
#include "quant/weight_view.h"

#include <algorithm>
#include <limits>

namespace ql {
namespace {

QuantSpec reductionBlock(Preset preset, Target target, std::int64_t size) {
    QuantSpec s;
    s.preset = preset;
    s.target = target;
    s.scheme = Scheme::Block;
    s.axes.clear(); // along the reduction axis (a Linear's input features), GPTQ style: the role's
    s.block = {size};
    return s;
}

QuantSpec perChannel(Preset preset, Target target) {
    QuantSpec s;
    s.preset = preset;
    s.target = target;
    s.scheme = Scheme::PerChannel;
    s.axes = {0}; // one scale per output channel (the role's channel axis)
    return s;
}

QuantSpec blockFormat(Preset preset) {
    QuantSpec s;
    s.preset = preset;
    s.target = Target::Fp4E2M1;
    s.scheme = Scheme::Block;
    s.axes.clear();
    return s;
}

// Why a selected tensor is not planned (empty: it is): what no format of the planner applies to.
std::string whyNotPlanned(const TensorInfo& info, const RoleAxes& role, const PlanScope& scope) {
    if (!isFloating(info.dtype))
        return "not a floating-point tensor (" + std::string(nameOf(info.dtype)) + ")";
    if (elementCount(info.shape) == 0) return "no elements";
    if (info.shape.empty()) return "a scalar: nothing to plan";
    if (std::string why = notAWeight(role); !why.empty() && !scope.includeNonWeights)
        return why + " (--include-non-weights plans it)";
    if (role.role == WeightRole::Embedding)
        return "an embedding table (" + role.basis +
               "): vLLM and transformers load quantized Linear weights only";
    return {};
}

std::int64_t storedBits(const std::vector<NamedTensor>& stored, const std::string& shapeName) {
    std::int64_t bits = 0;
    for (const auto& t : stored)
        if (t.name != shapeName) bits += static_cast<std::int64_t>(t.tensor.byteSize()) * 8;
    return bits;
}

// The mean channel importance over the whole file: the weight a tensor without an entry of its
// own gets on every channel, so that its error adds to the others' on a comparable scale.
double meanImportance(const Importance& importance) {
    double sum = 0;
    std::int64_t n = 0;
    for (const auto& [name, e] : importance.file().entries)
        for (float v : e.sqMean)
            sum += v, ++n;
    return n ? sum / static_cast<double>(n) : 1.0;
}

PlanCell measureCell(const JobRequest& request, const Backend& backend, const LoadedTensor& tensor,
                     const RoleAxes& role, const PlanCandidate& candidate,
                     const std::optional<Importance::Weights>& weights, double fallbackWeight,
                     const PlanScope& scope, const ProgressFn& progress) {
    const TensorInfo& info = tensor.info();
    PlanCell c;
    if (!candidate.spec) {
        c.bits = elementCount(info.shape) * bitsOf(info.dtype);
        c.error = 0;
        c.sqnrDb = std::numeric_limits<double>::infinity();
        return c;
    }
    try {
        const ResolvedSpec plan = planOfCandidate(candidate, role, info.shape);
        // (a cell needs the totals and the codes: no clipping rows)
        TensorMeasurement run = measureTensor(tensor, plan, backend, {.progress = progress, .groupRows = 0});
        const ErrorStats& stats = run.report.analysis.stats;
        if (const auto bad = stats.nonFiniteOutputCount())
            throw QuantError("it reconstructs " + std::to_string(bad) + " finite values as NaN or infinity");
        const QuantizedTensor q{info.name, run.result.plan, std::move(run.result.params),
                                std::move(run.result.codes)};
        const std::string& file = request.source->path();
        std::optional<CompressedTensorsArgs> args;
        try {
            args = compressedTensorsArgs(q, file);
        } catch (const FileError& e) {
            if (scope.compressedTensorsOnly) throw;
            c.noCompressedTensors = e.what();
        }
        if (args) {
            nlohmann::json described;
            const auto stored = compressedTensorsTensors(q, *args, info.dtype, file, described);
            c.bits = storedBits(stored, described.value("shape", std::string()));
            c.compressedTensors = {{"format", args->format}, {"weights", args->weights}};
        } else {
            c.bits = quantizedBits(q.plan, q.params.zeroPoints); // as QuantLens's native layout stores it
        }
        if (scope.outputError)
            c.error = scope.outputError(info, dequantizeReference(q.plan, q.params, q.codes));
        else
            c.error =
                weights
                    ? weightedErrorOf(q.plan, q.params, q.codes, tensor.floats(), *weights).sumWeightedSqError
                    : stats.sumSqError() * fallbackWeight;
        c.sqnrDb = stats.sqnrDb();
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        c = PlanCell{};
        c.why = e.what();
    }
    return c;
}

} // namespace

std::string whyNotPlanned(const TensorSource& source, const TensorInfo& info, const PlanScope& scope) {
    return whyNotPlanned(info, roleOf(source, info), scope);
}

ResolvedSpec planOfCandidate(const PlanCandidate& candidate, const RoleAxes& role, const Shape& shape) {
    if (!candidate.spec) throw QuantError("the candidate " + candidate.name + " keeps the weight as stored");
    if (candidate.roleAxes) return planForRole(*candidate.spec, shape, role);
    return planAsGiven(*candidate.spec, shape);
}

std::vector<PlanCandidate> defaultPlanCandidates() {
    // ggml types: the llama.cpp type of the same code width whose blocks are no coarser (q4_0 has
    // blocks of 32 with an f16 scale, q4_K super-blocks of 256 with 32-element sub-scales).
    return {
        {"nvfp4", blockFormat(Preset::NVFP4), "q4_K"},
        {"mxfp4", blockFormat(Preset::MX), "mxfp4", true},
        {"int4-g128", reductionBlock(Preset::TensorRT, Target::Int4, 128), "q4_K"},
        {"int4-g64", reductionBlock(Preset::TensorRT, Target::Int4, 64), "q4_K"},
        {"int4-g32", reductionBlock(Preset::TensorRT, Target::Int4, 32), "q4_0"},
        {"fp8-channel", perChannel(Preset::TensorRT, Target::Fp8E4M3), "q8_0"},
        {"int8-channel", perChannel(Preset::Torch, Target::Int8), "q8_0"},
        {"keep", std::nullopt, ""},
    };
}

std::vector<PlanCandidate> planCandidatesNamed(const std::vector<std::string>& names) {
    const auto all = defaultPlanCandidates();
    std::vector<PlanCandidate> out;
    for (const auto& n : names) {
        const auto it =
            std::find_if(all.begin(), all.end(), [&](const PlanCandidate& c) { return c.name == n; });
        if (it == all.end()) {
            std::string known;
            for (const auto& c : all)
                known += (known.empty() ? "" : ", ") + c.name;
            throw QuantError("unknown candidate '" + n + "' (choose " + known + ")");
        }
        out.push_back(*it);
    }
    return out;
}

std::int64_t PlanMeasurements::elements() const {
    std::int64_t n = 0;
    for (const auto& t : tensors)
        n += t.elements;
    return n;
}

PlanMeasurements measurePlan(const JobRequest& request, const std::vector<std::string>& names,
                             const std::vector<PlanCandidate>& candidates, const ModelEvents& events,
                             const PlanScope& scope) {
    if (candidates.empty()) throw QuantError("the planner needs at least one candidate format");
    const TensorSource& source = *request.source;
    const Backend& backend = request.registry->require(request.backend);
    const Importance* importance = request.importance.get();
    const double fallbackWeight = importance ? meanImportance(*importance) : 1.0;
    PlanMeasurements m;
    m.file = source.path();
    m.importance = importance ? importance->file().path : std::string();
    m.outputObjective = scope.outputError ? scope.objective : std::string();
    m.candidates = candidates;
    const int total = static_cast<int>(names.size());
    for (int i = 0; i < total; ++i) {
        const TensorInfo& info = requireTensor(source, names[static_cast<std::size_t>(i)]);
        if (events.started) events.started(i, total, info.name);
        const RoleAxes role = roleOf(source, info);
        if (std::string why = whyNotPlanned(info, role, scope); !why.empty()) {
            m.notPlanned.emplace_back(info.name, why);
            continue;
        }
        PlanTensor t{info.name,      info.shape, info.dtype, elementCount(info.shape),
                     describe(role), false,      {},         {}};
        std::optional<Importance::Weights> weights;
        if (importance) {
            std::string why;
            weights = importance->forTensor(info, role, why);
            t.weighted = weights.has_value();
            t.note = weights ? weights->origin : why + "; weighted by the file's mean importance";
        }
        try {
            const LoadedTensor tensor(source, info);
            for (const auto& candidate : candidates)
                t.cells.push_back(measureCell(request, backend, tensor, role, candidate, weights,
                                              fallbackWeight, scope, events.progress));
        } catch (const Cancelled&) {
            throw;
        } catch (const std::exception& e) { // unreadable: kept as it is
            m.notPlanned.emplace_back(info.name, e.what());
            source.release(info.name);
            continue;
        }
        source.release(info.name);
        m.tensors.push_back(std::move(t));
    }
    if (m.tensors.empty()) {
        std::string why;
        if (!m.notPlanned.empty())
            why = " (" + m.notPlanned.front().first + ": " + m.notPlanned.front().second +
                  (m.notPlanned.size() > 1 ? "; and " + std::to_string(m.notPlanned.size() - 1) + " more"
                                           : "") +
                  ")";
        throw QuantError(source.path() + ": no selected tensor is a weight to plan" + why);
    }
    return m;
}

double PlanResult::bitsPerWeight(const PlanMeasurements& m) const {
    const auto n = m.elements();
    return n ? static_cast<double>(solution.bits) / static_cast<double>(n) : NAN;
}

namespace {

std::vector<std::vector<PlanOption>> optionsOf(const PlanMeasurements& m) {
    std::vector<std::vector<PlanOption>> options;
    for (const auto& t : m.tensors) {
        auto& row = options.emplace_back();
        for (const auto& c : t.cells)
            row.push_back({c.bits, c.bits < 0 ? std::numeric_limits<double>::infinity() : c.error});
    }
    return options;
}

} // namespace

std::vector<FrontPoint> planFrontOf(const PlanMeasurements& m) {
    return planFront(optionsOf(m));
}

PlanResult choosePlan(const PlanMeasurements& m, const PlanBudget& budget,
                      std::optional<std::vector<FrontPoint>> front) {
    const auto options = optionsOf(m);
    PlanResult r;
    const double n = static_cast<double>(m.elements());
    // A budget beyond any model's size is no limit at all: held at the largest bit count, not wrapped.
    constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();
    if (std::isnan(budget.bitsPerWeight)) throw QuantError("the budget's bits per weight is not a number");
    if (budget.bitsPerWeight > 0) {
        const double bits = std::floor(budget.bitsPerWeight * n);
        r.budgetBits = bits >= 0x1p62 ? kNoLimit : static_cast<std::int64_t>(bits);
    } else if (budget.bytes > 0) {
        r.budgetBits = budget.bytes > kNoLimit / 8 ? kNoLimit : budget.bytes * 8;
    } else
        throw QuantError("the plan needs a budget: bits per weight or bytes");
    r.solution = solvePlan(options, r.budgetBits);
    r.front = front ? std::move(*front) : planFront(options);
    if (!r.solution.feasible && r.front.empty())
        throw QuantError("no plan: these candidates leave a weight with no format that fits it (add keep, "
                         "or a candidate whose groups or blocks fit)");
    if (!r.solution.feasible) {
        const double smallest = static_cast<double>(r.front.front().bits) / n;
        char text[64];
        std::snprintf(text, sizeof text, "%.4g", smallest);
        throw QuantError("no plan fits the budget: the smallest choice of these candidates stores " +
                         std::string(text) + " bits per weight");
    }
    return r;
}

} // namespace ql
