#include "base/error.h"
#include "base/suggest.h"
#include "io/export_compressed_tensors.h"
#include "job/explicit_params.h"
#include "job/job.h"
#include "job/tensor_measurement.h"

#include <algorithm>
#include <new>
#include <regex>
#include <variant>

namespace ql {
namespace {

// std::regex matches recursively, one level per character: names longer than this are matched
// as plain text against the expression instead of risking the stack.
constexpr std::size_t kRegexNameLimit = 4096;

TensorReport reportOf(const TensorInfo& info, const std::string& backend) {
    TensorReport r;
    r.name = info.name;
    r.shape = info.shape;
    r.dtype = info.dtype;
    r.backend = backend;
    return r;
}

// The tensor's plan, or why the spec does not apply to it (planned once: the run uses this plan).
std::variant<ResolvedSpec, std::string> planOrReason(const JobRequest& request, const TensorInfo& info,
                                                     bool weightsOnly) {
    if (!isFloating(info.dtype))
        return "not a floating-point tensor (" + std::string(nameOf(info.dtype)) + ")";
    if (info.shape.empty()) return std::string("a 0-d scalar");
    if (elementCount(info.shape) == 0) return std::string("no elements");
    if (weightsOnly)
        if (std::string why = notAWeight(roleOf(*request.source, info)); !why.empty())
            return why + " (--include-non-weights quantizes it)";
    try {
        return planForTensor(request, request.spec, info); // the role's axes unless one was named
    } catch (const QuantError& e) {
        return std::string(e.what());
    }
}

} // namespace

std::vector<std::string> selectTensors(const TensorSource& source, const TensorSelection& s) {
    const int ways = !s.names.empty() + !s.match.empty() + s.all;
    if (ways != 1)
        throw QuantError("choose the tensors with exactly one of: names, a regular expression, or all");
    std::vector<std::string> all;
    for (const auto& t : source.tensors())
        all.push_back(t.name);
    if (!s.names.empty()) {
        for (const auto& n : s.names)
            requireTensor(source, n);
        return s.names;
    }
    if (s.all) {
        if (all.empty()) throw FileError(source.path() + ": the file holds no tensors");
        return all;
    }
    std::regex re;
    try {
        re = std::regex(s.match);
    } catch (const std::regex_error& e) {
        throw QuantError("'" + s.match + "' is not a valid regular expression: " + e.what());
    }
    std::vector<std::string> names;
    for (const auto& n : all) {
        const bool hit =
            n.size() <= kRegexNameLimit ? std::regex_search(n, re) : n.find(s.match) != std::string::npos;
        if (hit) names.push_back(n);
    }
    if (names.empty())
        throw FileError(source.path() + ": no tensor matches '" + s.match + "'" + didYouMean(s.match, all));
    return names;
}

std::string compressedTensorsRefusal(const QuantizedTensor& q, const std::string& exportPath) {
    // A name that does not end in ".weight" is stored as "<name>.weight" (compressedTensorsName).
    try {
        compressedTensorsArgs(q, exportPath);
        return {};
    } catch (const FileError& e) {
        // "<file>: tensor '<name>' (<preset> <target>): no compressed-tensors layout: ..." without the
        // file and the name, which the pass-through's listing gives.
        std::string what = e.what();
        const auto at = what.find("): no compressed-tensors layout");
        const auto open = at == std::string::npos ? std::string::npos : what.rfind(" (", at);
        if (open == std::string::npos) return what;
        return what.substr(open + 2, at - open - 2) + what.substr(at + 1);
    }
}

ExportExtras exportExtras(const ModelOutcome& outcome) {
    ExportExtras extras;
    extras.kept = outcome.kept;
    for (const auto& r : outcome.reports)
        if (!r.error.empty()) extras.failed.emplace_back(r.name, r.error);
    return extras;
}

ModelOutcome runModelJob(const JobRequest& request, const std::vector<std::string>& names,
                         const ModelJobOptions& options, const ModelEvents& events) {
    const TensorSource& source = *request.source;
    const Backend& backend = request.registry->require(request.backend);
    backend.prepare(); // a device starts while the first tensor is read
    ModelOutcome out;
    ExplicitParams explicitParams(request, names.size()); // each parameter file opened once
    const int total = static_cast<int>(names.size());
    for (int i = 0; i < total; ++i) {
        const TensorInfo& info = requireTensor(source, names[static_cast<std::size_t>(i)]);
        if (events.started) events.started(i, total, info.name);
        TensorReport report = reportOf(info, backend.name());
        // Kept as it is (a whole-model run) or failed (named tensors), with the reason.
        auto passThrough = [&](const std::string& why) {
            report = reportOf(info, backend.name());
            (options.passThrough ? report.passedThrough : report.error) = why;
            (options.passThrough ? out.passedThrough : out.failed) += 1;
            if (!options.passThrough || !options.keepCodes) return;
            try {
                out.kept.push_back({info.name, source.load(info.name)});
            } catch (const std::exception& e) { // unreadable: it fails instead
                report.passedThrough.clear();
                report.error = e.what();
                --out.passedThrough;
                ++out.failed;
            }
        };
        auto plan = planOrReason(request, info, options.weightsOnly);
        if (const auto* why = std::get_if<std::string>(&plan)) {
            passThrough(*why);
        } else {
            std::string unstorable;
            try {
                const LoadedTensor tensor(source, info);
                const auto params = explicitParams.forTensor(info.name);
                // Only the rows and parameters its report keeps: memory bounded per tensor.
                TensorMeasurement run = measureTensor(tensor, std::get<ResolvedSpec>(plan), backend,
                                                      {.params = params,
                                                       .repeat = request.repeat,
                                                       .progress = events.progress,
                                                       .importance = request.importance.get(),
                                                       .groupRows = ReportOptions{}.maxGroups,
                                                       .keepCodes = options.keepCodes || options.unstorable});
                report = std::move(run.report);
                QuantizedTensor q{info.name, run.result.plan, std::move(run.result.params),
                                  std::move(run.result.codes)};
                if (options.unstorable) unstorable = options.unstorable(q);
                if (options.keepCodes && unstorable.empty()) out.quantized.push_back(std::move(q));
            } catch (const Cancelled&) {
                throw;
            } catch (const std::bad_alloc&) {
                report.error = "out of memory";
            } catch (const std::exception& e) {
                report.error = e.what();
            }
            if (!unstorable.empty())
                passThrough(unstorable);
            else
                out.failed += !report.error.empty();
        }
        if (events.finished) events.finished(report);
        source.release(info.name); // memory follows the largest tensor, not the model
        out.reports.push_back(std::move(report));
    }
    return out;
}

} // namespace ql
