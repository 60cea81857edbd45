#include "widgets/quantjob.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/tensor_run.h"
#include "quant/calibration.h"
#include "tensor/error.h"

namespace ql {
namespace {

SideOutcome runSide(const TensorInfo& info, const std::vector<float>& values, const QuantSpec& spec,
                    const std::optional<QuantParams>& params, const Backend& backend, const ProgressFn& progress) {
    TensorRun run = runTensor(info, values, spec, backend, params, 1, progress);
    SideOutcome side;
    side.label = backend.name();
    side.report = std::move(run.report);
    side.codes = std::move(run.result.codes);
    side.bytesIn = static_cast<double>(values.size()) * sizeof(float);
    return side;
}

/// Progress of step `index` of `steps`, mapped into the caller's [0, 1].
ProgressFn subProgress(const ProgressFn& progress, int index, int steps) {
    if (!progress) return {};
    return [progress, index, steps](double done) { return progress((index + done) / steps); };
}

// A superseded job may still be loading while the next one starts: the HDF5 reader serialises
// its own library calls (core/io), so loads need no lock here.
std::vector<float> loadValues(const TensorSource& source, const std::string& name) {
    return source.load(name).toFloatVector();
}

std::string where(const JobRequest& r, const std::string& tensor, const std::string& why) {
    return r.source->path() + ": " + tensor + ": " + why;
}

std::vector<float> loadParamTensor(const std::string& text, const char* role) {
    const auto ref = parseTensorRef(text);
    if (!ref) throw QuantError(std::string(role) + " must be named as FILE:TENSOR, got '" + text + "'");
    return loadTensorValues(*ref, role);
}

// Calibration "file": the scales (and zero points) the request names, as the operator takes them.
std::optional<QuantParams> explicitParams(const JobRequest& r) {
    if (r.spec.calibration.method != CalibMethod::Explicit) return std::nullopt;
    QuantParams p;
    p.scales = loadParamTensor(r.params.scales, "scales");
    if (!r.params.zeroPoints.empty()) p.zeroPoints = loadParamTensor(r.params.zeroPoints, "zero points");
    return p;
}

} // namespace

QuantSpec specOfB(const JobRequest& request) {
    QuantSpec b = request.spec;
    if (request.compare.kind == CompareWith::Kind::Preset) b.preset = request.compare.preset;
    return b;
}

std::pair<std::int64_t, std::int64_t> matrixView(const Shape& shape) {
    if (shape.empty()) return {1, 1};
    const std::int64_t rows = shape[0];
    return {rows, rows ? elementCount(shape) / rows : 0};
}

TensorOutcome runTensorJob(const JobRequest& request, const ProgressFn& progress) {
    const TensorInfo* info = request.source->find(request.tensor);
    if (!info) throw FileError(where(request, request.tensor, "no such tensor in the file"));
    const std::vector<float> values = loadValues(*request.source, request.tensor);
    const bool twoSides = request.compare.kind != CompareWith::Kind::None;
    const int steps = twoSides ? 2 : 1;
    const BackendRegistry& registry = *request.registry;

    const std::optional<QuantParams> paramsA = explicitParams(request);
    TensorOutcome out;
    try {
        out.a = runSide(*info, values, request.spec, paramsA, registry.require(request.backend),
                        subProgress(progress, 0, steps));
    } catch (const QuantError& e) {
        throw QuantError(where(request, info->name, e.what()));
    }
    if (!twoSides) return out;

    const std::string nameB =
        request.compare.kind == CompareWith::Kind::Backend ? request.compare.backend : request.backend;
    const QuantSpec specB = specOfB(request);
    std::optional<QuantParams> paramsB = paramsA;
    if (paramsA) paramsB = convertParams(*paramsA, out.a.report.plan.convention, conventionOf(specB));
    try {
        out.b = runSide(*info, values, specB, paramsB, registry.require(nameB), subProgress(progress, 1, steps));
    } catch (const QuantError& e) {
        throw QuantError(where(request, info->name, std::string("B: ") + e.what()));
    }
    if (request.compare.kind == CompareWith::Kind::Preset) {
        out.a.label = std::string(nameOf(request.spec.preset));
        out.b->label = std::string(nameOf(specB.preset));
    } else if (out.a.label == out.b->label) {
        out.b->label += " (B)";
    }
    out.comparison = compareResults(out.a.label, out.a.report.plan, out.a.report.params, out.a.codes, out.b->label,
                                    out.b->report.plan, out.b->report.params, out.b->codes, values);

    out.mismatches = mismatchMap(out.a.codes, out.b->codes, info->shape);
    return out;
}

ModelOutcome runModelJob(const JobRequest& request, const ProgressFn& progress) {
    std::vector<const TensorInfo*> todo;
    for (const auto& t : request.source->tensors())
        if (isWeightTensor(t)) todo.push_back(&t);
    const Backend& backend = request.registry->require(request.backend);
    if (request.spec.calibration.method == CalibMethod::Explicit)
        throw QuantError("scales from a file belong to one tensor: quantize the whole model with a calibration "
                         "method that measures each tensor");
    ModelOutcome out;
    const int steps = static_cast<int>(todo.size());
    for (int i = 0; i < steps; ++i) {
        const TensorInfo& info = *todo[static_cast<std::size_t>(i)];
        reportProgress(progress, static_cast<double>(i) / std::max(steps, 1));
        try {
            const std::vector<float> values = loadValues(*request.source, info.name);
            SideOutcome side = runSide(info, values, request.spec, std::nullopt, backend, subProgress(progress, i, steps));
            out.quantized.push_back({info.name, side.report.plan, side.report.params, std::move(side.codes)});
            out.reports.push_back(std::move(side.report));
        } catch (const Cancelled&) {
            throw;
        } catch (const std::exception& e) {
            TensorReport failed;
            failed.name = info.name;
            failed.shape = info.shape;
            failed.dtype = info.dtype;
            failed.backend = backend.name();
            failed.error = e.what();
            out.reports.push_back(std::move(failed));
        }
    }
    reportProgress(progress, 1.0);
    return out;
}

ValuePreview previewValues(const TensorSource& source, const std::string& tensor, int bins) {
    const std::vector<float> values = loadValues(source, tensor);
    return {tensor, valueHistogram(values, bins), static_cast<std::int64_t>(values.size())};
}

} // namespace ql
