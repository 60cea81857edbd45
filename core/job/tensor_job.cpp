#include "base/error.h"
#include "base/suggest.h"
#include "job/explicit_params.h"
#include "job/job.h"
#include "job/tensor_measurement.h"
#include "quant/calibration.h"

#include <cmath>
#include <limits>
#include <utility>

namespace ql {
namespace {

/// Progress of step `index` of `steps`, mapped into the caller's [0, 1].
ProgressFn subProgress(const ProgressFn& progress, int index, int steps) {
    if (!progress) return {};
    return [progress, index, steps](double done) { return progress((index + done) / steps); };
}

SideOutcome runSide(const LoadedTensor& tensor, const QuantSpec& spec,
                    const std::optional<QuantParams>& params, const Backend& backend,
                    const JobRequest& request, const ProgressFn& progress) {
    TensorMeasurement run = measureTensor(tensor, planForTensor(request, spec, tensor.info()), backend,
                                          {.params = params,
                                           .repeat = request.repeat,
                                           .progress = progress,
                                           .importance = request.importance.get(),
                                           .statistics = !request.codesOnly,
                                           .resultParams = false});
    SideOutcome side;
    side.label = backend.name();
    side.report = std::move(run.report);
    side.codes = std::move(run.result.codes);
    side.bytesIn = static_cast<double>(tensor.view().count) * static_cast<double>(tensor.view().width());
    return side;
}

} // namespace

std::string whereIn(const TensorSource& source, const std::string& tensor, const std::string& why) {
    return source.path() + ": " + tensor + ": " + why;
}

QuantSpec specOfB(const JobRequest& request) {
    QuantSpec b = request.spec;
    if (request.compare.kind == CompareWith::Kind::Preset) b.preset = request.compare.preset;
    return b;
}

const TensorInfo& requireTensor(const TensorSource& source, const std::string& name) {
    if (const TensorInfo* info = source.find(name)) return *info;
    // HDF5 paths are often written absolute ("/dense/kernel:0"); the inventory names them relative.
    if (name.size() > 1 && name.front() == '/')
        if (const TensorInfo* info = source.find(name.substr(1))) return *info;
    if (const UnlistedEntry* u = source.findUnlisted(name)) // in the file, but not one QuantLens reads
        throw FileError(whereIn(source, name, u->reason));
    std::vector<std::string> names;
    for (const auto& t : source.tensors())
        names.push_back(t.name);
    throw FileError(whereIn(source, name, "no such tensor in the file" + didYouMean(name, names)));
}

TensorOutcome runTensorJob(const JobRequest& request, const std::string& name, const ProgressFn& progress) {
    const TensorSource& source = *request.source;
    const TensorInfo& info = requireTensor(source, name);
    const BackendRegistry& registry = *request.registry;
    const bool twoSides = request.compare.kind != CompareWith::Kind::None;
    const int steps = twoSides ? 2 : 1;
    registry.require(request.backend).prepare(); // a device starts while the tensor is read
    const LoadedTensor tensor(source, info);

    std::optional<QuantParams> paramsA;
    TensorOutcome out;
    try {
        paramsA = ExplicitParams(request, 1).forTensor(name);
        out.a = runSide(tensor, request.spec, paramsA, registry.require(request.backend), request,
                        subProgress(progress, 0, steps));
    } catch (const QuantError& e) {
        throw QuantError(whereIn(source, name, (twoSides ? "A: " : "") + std::string(e.what())));
    }
    if (!twoSides) return out;

    const std::string nameB =
        request.compare.kind == CompareWith::Kind::Backend ? request.compare.backend : request.backend;
    const QuantSpec specB = specOfB(request);
    std::optional<QuantParams> paramsB = paramsA;
    if (paramsA) paramsB = convertParams(*paramsA, out.a.report.plan.convention, conventionOf(specB));
    try {
        out.b = runSide(tensor, specB, paramsB, registry.require(nameB), request,
                        subProgress(progress, 1, steps));
    } catch (const QuantError& e) {
        throw QuantError(whereIn(source, name, "B (" + describe(specB) + "): " + e.what()));
    }
    if (request.compare.kind == CompareWith::Kind::Preset) {
        out.a.label = std::string(nameOf(request.spec.preset));
        out.b->label = std::string(nameOf(specB.preset));
    } else if (out.a.label == out.b->label) {
        out.b->label += " (B)";
    }
    out.comparison =
        compareResults(out.a.label, out.a.report.plan, out.a.report.params, out.a.codes, out.b->label,
                       out.b->report.plan, out.b->report.params, out.b->codes, tensor.floats());
    out.mismatches = mismatchMap(out.a.codes, out.b->codes, info.shape);
    return out;
}

ValuePreview previewValues(const TensorSource& source, const std::string& name, int bins) {
    const LoadedTensor tensor(source, requireTensor(source, name));
    const ValuesView& v = tensor.view();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::int64_t i = 0; i < v.count; ++i)
        if (const float x = v.at(i); std::isfinite(x))
            lo = std::min<double>(lo, x), hi = std::max<double>(hi, x);
    Histogram h = lo <= hi ? Histogram(lo, hi, bins) : Histogram(0, 1, bins);
    for (std::int64_t i = 0; i < v.count; ++i)
        h.add(v.at(i));
    return {name, std::move(h), v.count};
}

} // namespace ql
