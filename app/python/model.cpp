#include "model.h"

#include "backends.h"
#include "base/error.h"
#include "convert.h"
#include "interrupt.h"
#include "io/inspect_report.h"
#include "job/diff_job.h"
#include "job/importance.h"
#include "job/plan_output.h"
#include "job/report_parts.h"
#include "job/tensor_measurement.h"
#include "quantize.h"
#include "report/check.h"
#include "spec_keywords.h"

#include <sstream>

namespace ql::py {
namespace pb = pybind11;

namespace {

class Model {
public:
    explicit Model(std::shared_ptr<const TensorSource> source)
        : m_source(std::move(source)) {}
    const TensorSource& source() const { return *m_source; }
    std::shared_ptr<const TensorSource> shared() const { return m_source; }

private:
    std::shared_ptr<const TensorSource> m_source;
};

pb::dict infoDict(const TensorInfo& t) {
    pb::dict d;
    d["name"] = toPython(t.name);
    d["dtype"] = std::string(nameOf(t.dtype));
    d["shape"] = toPython(t.shape);
    d["bytes"] = t.byteSize;
    d["location"] = toPython(t.location);
    return d;
}

pb::list namesOf(const Model& model) {
    pb::list out;
    for (const auto& t : model.source().tensors())
        out.append(toPython(t.name));
    return out;
}

const TensorInfo& lookup(const TensorSource& source, const std::string& name) {
    if (const TensorInfo* info = source.find(name)) return *info;
    try {
        return requireTensor(source, name); // an absolute HDF5 path, or the reason it is not listed
    } catch (const FileError& e) {
        if (source.findUnlisted(name) || (name.size() > 1 && source.findUnlisted(name.substr(1)))) throw;
        throw pb::key_error(e.what());
    }
}

pb::object tensorArray(const Model& model, const std::string& name) {
    const TensorInfo& info = lookup(model.source(), name);
    std::unique_ptr<Tensor> t;
    {
        pb::gil_scoped_release release;
        t = std::make_unique<Tensor>(model.source().load(info.name));
    }
    const void* data = t->data();
    const pb::dtype dtype = numpyDtypeOf(t->dtype());
    const Shape shape = t->shape();
    // The array keeps the tensor, and so its mapping (or owned bytes), alive: no copy.
    pb::capsule owner(t.release(), [](void* p) { delete static_cast<Tensor*>(p); });
    return readOnlyView(data, dtype, shape, owner);
}

std::vector<std::string> stringList(const pb::handle& v, const char* what) {
    if (v.is_none()) return {};
    if (pb::isinstance<pb::str>(v)) return {v.cast<std::string>()};
    std::vector<std::string> out;
    for (const auto& item : v) {
        if (!pb::isinstance<pb::str>(item))
            throw pb::type_error(std::string(what) + " takes str or a list of str");
        out.push_back(item.cast<std::string>());
    }
    return out;
}

std::vector<CheckRule> parseRules(const pb::handle& rules) {
    std::vector<CheckRule> out;
    for (const auto& text : stringList(rules, "rules")) {
        try {
            out.push_back(CheckRule::parse(text));
        } catch (const QuantError& e) {
            throw SpecError("--rule: " + std::string(e.what()));
        }
    }
    if (out.empty()) throw SpecError("give the rules: a rule such as 'sqnr < 30', or a list of them");
    return out;
}

// A request as the CLI's commands make one for FILE: the source, this module's backends and the spec.
JobRequest requestFor(std::shared_ptr<const TensorSource> source, const pb::dict& spec,
                      const char* function) {
    const RunKeywords k = readKeywords(spec, function, Extras::Run);
    if (k.spec.scaleValues || k.spec.zeroPointValues)
        throw pb::type_error(
            std::string(function) +
            ": scales and zero points of a model run are files ('FILE:TENSOR', or 'FILE' for "
            "each tensor's own <name>_scale), not arrays");
    JobRequest r;
    r.source = std::move(source);
    r.registry = registry();
    r.spec = specFromOptions(k.spec);
    r.roleAxes = k.spec.axis.empty(); // axis=None: each tensor's role decides, as in the CLI
    requireBackend(k.backend);
    r.backend = k.backend;
    r.params = {k.spec.scale, k.spec.zeroPoint};
    r.repeat = k.repeat;
    return r;
}

pb::object diff(const std::string& a, const std::string& b, const pb::object& requantize) {
    std::shared_ptr<const TensorSource> source;
    {
        pb::gil_scoped_release release;
        source = openTensorSource(a);
    }
    std::optional<JobRequest> request;
    if (!requantize.is_none()) request = requestFor(source, requantize.cast<pb::dict>(), "diff requantize");
    Interruptible interrupt;
    const nlohmann::json report =
        interrupt.run([&] { return runDiffJob(source, b, interrupt.callback(), request).report(); });
    return toPython(report);
}

// The CLI's nearest llama.cpp type for a --candidate (cmd_plan): 8-bit codes q8_0, FP4 in MX blocks
// mxfp4, any other sub-byte code q4_K.
std::string nearestGgmlType(const QuantSpec& s) {
    return !isSubByte(s.target) ? "q8_0" : (s.preset == Preset::MX ? "mxfp4" : "q4_K");
}

std::vector<PlanCandidate> candidatesOf(const pb::object& candidates) {
    if (candidates.is_none()) return defaultPlanCandidates();
    std::vector<PlanCandidate> out;
    auto named = [&](const std::vector<std::string>& names) {
        try {
            for (auto& c : planCandidatesNamed(names))
                out.push_back(std::move(c));
        } catch (const QuantError& e) {
            throw SpecError("--candidates: " + std::string(e.what()));
        }
    };
    if (pb::isinstance<pb::str>(candidates)) { // the CLI's text: "keep,nvfp4,int4-g128"
        std::vector<std::string> names;
        std::stringstream list(candidates.cast<std::string>());
        for (std::string n; std::getline(list, n, ',');)
            names.push_back(n);
        named(names);
    } else if (pb::isinstance<pb::dict>(candidates)) { // {name: spec dict, or None for a built-in}
        for (const auto& [key, value] : candidates.cast<pb::dict>()) {
            const std::string name = key.cast<std::string>();
            if (value.is_none()) {
                named({name});
                continue;
            }
            const RunKeywords k = readKeywords(value.cast<pb::dict>(), "plan candidate", Extras::SpecOnly);
            if (!k.spec.scale.empty() || k.spec.scaleValues || !k.spec.groupIndex.empty() || k.spec.groupEnds)
                throw SpecError("--candidate " + name +
                                ": a candidate calibrates itself (no --scale, --group-index)");
            PlanCandidate c{name, specFromOptions(k.spec), "", false, k.spec.axis.empty()}; // axis=: as given
            c.ggmlType = nearestGgmlType(*c.spec);
            out.push_back(std::move(c));
        }
    } else {
        named(stringList(candidates, "candidates"));
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (out[i].name == out[j].name) throw SpecError("two candidates are named '" + out[i].name + "'");
    return out;
}

pb::object plan(const std::string& path, const pb::object& budget, const pb::object& size,
                const pb::object& candidates, const pb::object& tensors, const pb::object& match,
                const pb::object& importance, const std::string& backend) {
    PlanBudget b;
    if (!budget.is_none()) b.bitsPerWeight = budget.cast<double>();
    if (!size.is_none()) b.bytes = size.cast<std::int64_t>();
    if (!budget.is_none() && !size.is_none())
        throw SpecError("give the budget as budget= or size=, not both");
    if (!(b.bitsPerWeight > 0) && b.bytes <= 0)
        throw SpecError("plan needs a budget: budget= (bits per weight, > 0) or size= (bytes, > 0)");
    const std::vector<PlanCandidate> formats = candidatesOf(candidates);
    JobRequest request;
    request.registry = registry();
    requireBackend(backend);
    request.backend = backend;
    {
        pb::gil_scoped_release release;
        request.source = openTensorSource(path);
    }
    if (!importance.is_none()) request.importance = Importance::open(importance.cast<std::string>());
    TensorSelection selection{stringList(tensors, "tensors"),
                              match.is_none() ? "" : match.cast<std::string>(), false};
    if (!selection.names.empty() && !selection.match.empty())
        throw SpecError("choose the tensors with tensors= or match=, not both");
    selection.all = selection.names.empty() && selection.match.empty();
    const std::vector<std::string> names = selectTensors(*request.source, selection);
    Interruptible interrupt;
    const nlohmann::json result = interrupt.run([&] {
        ModelEvents events;
        events.progress = interrupt.callback();
        const PlanMeasurements m = measurePlan(request, names, formats, events);
        return planJson(m, choosePlan(m, b));
    });
    return toPython(result);
}

pb::object check(const pb::object& report, const pb::object& rules) {
    const std::vector<CheckRule> parsed = parseRules(rules);
    nlohmann::json doc;
    std::string file = "the report";
    if (pb::isinstance<pb::str>(report) || pb::hasattr(report, "__fspath__")) {
        file = pb::str(pb::module_::import("os").attr("fspath")(report)).cast<std::string>();
        doc = readReportFile(file);
    } else {
        doc = fromPython(report);
    }
    CheckResult result;
    try {
        result = runChecks(checkReportOf(doc), parsed);
    } catch (const FileError& e) {
        if (file == "the report") throw SpecError(e.what());
        throw FileError(file + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw SpecError(file + ": not a well-formed QuantLens report: " + e.what());
    }
    pb::list subjects;
    for (const auto& s : result.subjects) {
        pb::dict d;
        d["name"] = toPython(s.name);
        d["status"] = s.status;
        d["failures"] = toPython(s.failures);
        d["entry"] = s.entry < 0 ? pb::object(pb::none()) : pb::object(pb::int_(s.entry));
        subjects.append(d);
    }
    pb::dict out;
    out["file"] = toPython(result.file);
    out["failed"] = result.failed();
    out["passed"] = result.failed() == 0;
    out["subjects"] = subjects;
    return out;
}

} // namespace

void registerModel(pb::module_& m) {
    pb::class_<Model>(m, "Model", "A model file's tensors, loaded one at a time when asked for.")
        .def_property_readonly("path", [](const Model& mdl) { return mdl.source().path(); })
        .def("names", &namesOf, "Every tensor's name, in file order")
        .def("keys", &namesOf)
        .def("__len__", [](const Model& mdl) { return mdl.source().tensors().size(); })
        .def("__iter__", [](const pb::object& self) { return self.attr("names")().attr("__iter__")(); })
        .def("__contains__",
             [](const Model& mdl, const std::string& name) { return mdl.source().find(name) != nullptr; })
        .def("__getitem__", &tensorArray, pb::arg("name"),
             "The tensor as a read-only NumPy array: a view of the memory-mapped file where the bytes allow "
             "(safetensors; ONNX external data), else of the bytes decoded once (GGUF blocks, HDF5). bf16 is "
             "uint16 bits (pass input_dtype='bf16' to quantize), fp8 / fp4 raw uint8 bits")
        .def("info",
             [](const Model& mdl, const std::string& name) { return infoDict(lookup(mdl.source(), name)); })
        .def_property_readonly("tensors",
                               [](const Model& mdl) {
                                   pb::list out;
                                   for (const auto& t : mdl.source().tensors())
                                       out.append(infoDict(t));
                                   return out;
                               })
        .def(
            "inspect",
            [](const Model& mdl) { return toPython(inspectReport(mdl.source(), mdl.source().path())); },
            "What `quantlens-cli inspect --json` prints: every tensor, ONNX QDQ weights' makeup, what is not "
            "listed")
        .def(
            "quantize",
            [](const Model& mdl, const std::string& name, const pb::kwargs& kw) {
                return quantizeTensor(mdl.source(), lookup(mdl.source(), name), kw);
            },
            pb::arg("name"),
            "quantize(name, **spec): one tensor as `quantlens-cli quantize FILE --tensor NAME` quantizes it "
            "(any dtype the file holds; f32, f16 and bf16 read in place)")
        .def("__repr__", [](const Model& mdl) {
            return "<quantlens.Model " + mdl.source().path() + ", " +
                   std::to_string(mdl.source().tensors().size()) + " tensors>";
        });

    m.def(
        "open",
        [](const std::string& path) {
            std::shared_ptr<const TensorSource> source;
            {
                pb::gil_scoped_release release;
                source = openTensorSource(path);
            }
            return Model(std::move(source));
        },
        pb::arg("path"),
        "open(path) -> Model: a safetensors file (or .safetensors.index.json), HDF5, GGUF or ONNX model; its "
        "tensors are read when asked for");
    m.def("diff", &diff, pb::arg("a"), pb::arg("b"), pb::kw_only(), pb::arg("requantize") = pb::none(),
          "diff(a, b, *, requantize=None) -> dict: `quantlens-cli diff A B --report`'s report. requantize: a "
          "dict of "
          "quantize()'s keywords to quantize A's tensors with and compare their codes with B's stored ones");
    m.def("plan", &plan, pb::arg("path"), pb::kw_only(), pb::arg("budget") = pb::none(),
          pb::arg("size") = pb::none(), pb::arg("candidates") = pb::none(), pb::arg("tensors") = pb::none(),
          pb::arg("match") = pb::none(), pb::arg("importance") = pb::none(), pb::arg("backend") = "cpu",
          "plan(path, *, budget=None, size=None, candidates=None, tensors=None, match=None, importance=None, "
          "backend='cpu') -> dict: `quantlens-cli plan --report`'s plan file. budget: bits per weight "
          "(--bits-per-weight), size: bytes (--size). candidates: names ('keep,nvfp4' or a list), or a dict "
          "{name: quantize() keywords, or None for a built-in}");
    m.def("check", &check, pb::arg("report"), pb::arg("rules"),
          "check(report, rules) -> dict: `quantlens-cli check`'s verdict on a report (a dict, or a path) for "
          "rules "
          "such as 'sqnr < 30' (a str or a list): each subject's status and failures, and how many failed");
}

} // namespace ql::py
