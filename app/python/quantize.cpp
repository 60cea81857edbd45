#include "quantize.h"

#include "analysis/comparison.h"
#include "array_source.h"
#include "backends.h"
#include "base/error.h"
#include "convert.h"
#include "interrupt.h"
#include "io/export_tensors.h"
#include "job/job.h"
#include "quant/packing.h"
#include "quant/reference.h"
#include "quant/spec_json.h"
#include "quant/weight_view.h"
#include "report/report.h"
#include "spec_keywords.h"

#include <chrono>

namespace ql::py {
namespace pb = pybind11;

namespace {

pb::dtype codeDtype(Target t) {
    switch (t) {
    case Target::Int8:
    case Target::Int4:
        return pb::dtype::of<std::int8_t>();
    case Target::Int32:
        return pb::dtype::of<std::int32_t>();
    default:
        return pb::dtype::of<std::uint8_t>(); // unsigned codes, and the raw bits of fp8 / fp4
    }
}

const Quantized& of(pb::handle self) {
    return self.cast<const QuantizeResult&>().get();
}

pb::dict histogramDict(const Histogram& h) {
    pb::dict d;
    d["scale"] = scaleName(h.scale());
    d["edges"] = copiedArray(h.edges(), {static_cast<std::int64_t>(h.binCount()) + 1});
    d["counts"] = copiedArray(h.counts(), {static_cast<std::int64_t>(h.counts().size())});
    d["underflow"] = h.underflow();
    d["overflow"] = h.overflow();
    d["nan"] = h.nanCount();
    return d;
}

pb::dict clippingDict(const ClippingStats& c) {
    const auto& rows = c.groups();
    const Shape n{static_cast<std::int64_t>(rows.size())};
    auto column = [&](auto get) {
        using T = decltype(get(rows.front()));
        std::vector<T> v;
        v.reserve(rows.size());
        for (const auto& g : rows)
            v.push_back(get(g));
        return ownedArray(std::move(v), n);
    };
    pb::dict d;
    d["count"] = column([](const GroupClipping& g) { return g.count; });
    d["clipped_low"] = column([](const GroupClipping& g) { return g.clippedLow; });
    d["clipped_high"] = column([](const GroupClipping& g) { return g.clippedHigh; });
    d["clipped_fraction"] = column([](const GroupClipping& g) { return g.clippedFraction(); });
    d["flushed_to_zero"] = column([](const GroupClipping& g) { return g.flushedToZero; });
    d["clip_error_sq"] = column([](const GroupClipping& g) { return g.clipErrorSq; });
    d["round_error_sq"] = column([](const GroupClipping& g) { return g.roundErrorSq; });
    d["sum_sq_x"] = column([](const GroupClipping& g) { return g.sumSqX; });
    d["max_abs_error"] = column([](const GroupClipping& g) { return g.maxAbsError; });
    d["sqnr_db"] = column([](const GroupClipping& g) { return g.sqnrDb(); });
    return d;
}

// Operator packing, as `quantlens-cli quantize --export-layout native` writes the codes.
void pack(Quantized& q) {
    const ResolvedSpec& plan = q.run.result.plan;
    const Codes& codes = q.run.result.codes;
    if (plan.convention.packing == Packing::Int32Words) {
        q.words = packInt32Words(codes, plan.shape);
        q.packedShape = plan.packedShape();
    } else if (plan.convention.packing != Packing::None || codes.target() == Target::Fp4E2M1) {
        q.nibbles = packNibbles(codes);
        q.packedShape = {static_cast<std::int64_t>(q.nibbles.size())};
    } else {
        return; // one code per element is how the operator emits it
    }
    q.packed = true;
}

struct Prepared {
    QuantSpec spec;
    std::optional<QuantParams> params;
    const Backend* backend = nullptr;
    RunKeywords keywords;
};

Prepared prepare(const pb::dict& kw, const char* function, const std::vector<std::string>& ignored = {}) {
    Prepared p;
    p.keywords = readKeywords(kw, function, Extras::Run, ignored);
    p.spec = specFromOptions(p.keywords.spec);
    p.params = explicitParamsOf(p.keywords.spec);
    p.backend = &requireBackend(p.keywords.backend);
    return p;
}

std::shared_ptr<Quantized> runOne(const LoadedTensor& tensor, const Prepared& p, const ProgressFn& progress) {
    auto q = std::make_shared<Quantized>();
    // axis=None: the array's role by its shape and name (quant/weight_role.h), as the CLI's default.
    const TensorInfo& info = tensor.info();
    const ResolvedSpec plan = p.keywords.spec.axis.empty()
                                  ? planForRole(p.spec, info.shape, weightRole(info.name, info.shape))
                                  : planAsGiven(p.spec, info.shape);
    q->run = measureTensor(tensor, plan, *p.backend,
                           {.params = p.params, .repeat = p.keywords.repeat, .progress = progress});
    if (p.keywords.packed) pack(*q);
    return q;
}

std::string optionalText(const pb::dict& kw, const char* key, const std::string& fallback) {
    if (!kw.contains(key) || kw[key].is_none()) return fallback;
    if (!pb::isinstance<pb::str>(kw[key]))
        throw pb::type_error(std::string(key) + " takes a str, got " +
                             pb::type::of(kw[key]).attr("__name__").cast<std::string>());
    return kw[key].cast<std::string>();
}

pb::object quantize(pb::handle x, const pb::kwargs& kw) {
    const Prepared p = prepare(kw, "quantize", {"input_dtype", "name"});
    const std::string name = optionalText(kw, "name", "x");
    const auto inputDtype = kw.contains("input_dtype") && !kw["input_dtype"].is_none()
                                ? std::optional<std::string>(optionalText(kw, "input_dtype", ""))
                                : std::nullopt;
    const ArrayInput in = readArray(x, inputDtype);
    const ArraySource source(name, in.tensor);
    Interruptible interrupt;
    std::shared_ptr<Quantized> q = interrupt.run([&] {
        const LoadedTensor tensor(source, source.tensors().front());
        return runOne(tensor, p, interrupt.callback());
    });
    return pb::cast(QuantizeResult(std::move(q)));
}

} // namespace

pb::object quantizeTensor(const TensorSource& source, const TensorInfo& info, const pb::kwargs& kw) {
    const Prepared p = prepare(kw, "quantize");
    Interruptible interrupt;
    std::shared_ptr<Quantized> q = interrupt.run([&] {
        const LoadedTensor tensor(source, info);
        try {
            return runOne(tensor, p, interrupt.callback());
        } catch (const QuantError& e) {
            throw QuantError(whereIn(source, info.name, e.what()));
        }
    });
    return pb::cast(QuantizeResult(std::move(q)));
}

namespace {

struct CompareOutcome {
    pb::object a, b;
    Comparison comparison;
    MismatchMap mismatches;
    nlohmann::json report;
};

pb::object compare(pb::handle x, const pb::dict& specA, const pb::dict& specB, const pb::object& inputDtype,
                   const std::string& name) {
    const Prepared a = prepare(specA, "compare spec_a");
    const Prepared b = prepare(specB, "compare spec_b");
    const ArrayInput in = readArray(
        x, inputDtype.is_none() ? std::nullopt : std::optional<std::string>(inputDtype.cast<std::string>()));
    const ArraySource source(name, in.tensor);
    Interruptible interrupt;
    auto out = std::make_shared<CompareOutcome>();
    std::shared_ptr<Quantized> qa, qb;
    interrupt.run([&] {
        const LoadedTensor tensor(source, source.tensors().front());
        // A's and B's messages say which side, as compare's do.
        try {
            qa = runOne(tensor, a, interrupt.callback());
        } catch (const QuantError& e) {
            throw QuantError("A: " + std::string(e.what()));
        }
        try {
            qb = runOne(tensor, b, interrupt.callback());
        } catch (const QuantError& e) {
            throw QuantError("B (" + describe(b.spec) + "): " + e.what());
        }
        std::string labelA = a.backend->name(), labelB = b.backend->name();
        if (a.spec.preset != b.spec.preset) {
            labelA = std::string(nameOf(a.spec.preset));
            labelB = std::string(nameOf(b.spec.preset));
        }
        if (labelA == labelB) labelB += " (B)";
        const Result& ra = qa->run.result;
        const Result& rb = qb->run.result;
        out->comparison = compareResults(labelA, ra.plan, ra.params, ra.codes, labelB, rb.plan, rb.params,
                                         rb.codes, tensor.floats());
        out->mismatches = mismatchMap(ra.codes, rb.codes, tensor.info().shape);
        out->report = reportJson(source.path(), {qa->run.report, qb->run.report}, &out->comparison);
        return 0;
    });
    out->a = pb::cast(QuantizeResult(std::move(qa)));
    out->b = pb::cast(QuantizeResult(std::move(qb)));
    return pb::cast(out);
}

const char* kQuantizeDoc = R"(quantize(x, **spec) -> QuantizeResult

Quantizes a NumPy array with core's pipeline, as `quantlens-cli quantize` quantizes one tensor.

x: a C-contiguous float32 or float16 array, or a uint16 array of bf16 bits with input_dtype="bf16";
read in place through the buffer protocol (never copied by the binding). The GIL is released while
the job runs; Ctrl-C cancels it.

Spec keywords are the CLI's SPEC flags (quantlens.spec_keywords() lists them): preset, scheme, axis,
group_size, block, group_index, dtype, symmetric, asymmetric, narrow_range, round, calib, scales,
zero_points, sqrt_mode. Values are the CLI's text ("int4", "percentile=99.9", "1,128"), or ints and
sequences of ints for axis and block; scales, zero_points and group_index take arrays (or
"FILE:TENSOR"). None, or leaving a keyword out, is the CLI's default (axis: the role's default).
Also: backend="cpu", repeat=1, packed=False (codes as the operator packs them), input_dtype, name="x".

Raises ValueError for a spec the CLI refuses (with its message), TypeError for an array of another
element type, OSError for a file that cannot be read.)";

// The benchmark's baseline: the same job as quantize(x, **kw) timed inside C++, from the array's
// bytes to the result (the tensor run and its plan), with nothing of the binding in the loop.
pb::list timeCoreJob(pb::handle x, int count, const pb::kwargs& kw) {
    const Prepared p = prepare(kw, "_time_core_job", {"input_dtype", "name"});
    const auto inputDtype = kw.contains("input_dtype") && !kw["input_dtype"].is_none()
                                ? std::optional<std::string>(optionalText(kw, "input_dtype", ""))
                                : std::nullopt;
    const ArrayInput in = readArray(x, inputDtype);
    const ArraySource source("x", in.tensor);
    std::vector<double> ms;
    {
        pb::gil_scoped_release release;
        for (int i = 0; i < count; ++i) {
            const auto start = std::chrono::steady_clock::now();
            const LoadedTensor tensor(source, source.tensors().front());
            const std::shared_ptr<Quantized> q = runOne(tensor, p, {});
            ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        }
    }
    pb::list out;
    for (double v : ms)
        out.append(v);
    return out;
}

} // namespace

void registerQuantize(pb::module_& m) {
    pb::class_<QuantizeResult>(m, "QuantizeResult",
                               "One tensor quantized: codes, parameters and the report's statistics.")
        .def_property_readonly(
            "codes",
            [](const pb::object& self) -> pb::object {
                const Quantized& q = of(self);
                if (q.packed && !q.words.empty())
                    return readOnlyView(q.words.data(), pb::dtype::of<std::int32_t>(), q.packedShape, self);
                if (q.packed)
                    return readOnlyView(q.nibbles.data(), pb::dtype::of<std::uint8_t>(), q.packedShape, self);
                const Codes& c = q.run.result.codes;
                return readOnlyView(c.data(), codeDtype(c.target()), q.run.result.plan.ownShape(), self);
            },
            "The codes: one per element in x's shape (int8 / uint8 / int32 values, raw bits for fp8 and "
            "fp4), "
            "or packed as the operator emits them when quantize() was given packed=True")
        .def_property_readonly("packed", [](const QuantizeResult& r) { return r.get().packed; })
        .def_property_readonly(
            "scales",
            [](const pb::object& self) {
                const Result& r = of(self).run.result;
                return readOnlyView(r.params.scales.data(), pb::dtype::of<float>(), exportScaleShape(r.plan),
                                    self);
            },
            "The scales in the operator's own meaning (a step, or an inverse step for multiply conventions; "
            "MX: 2^e, NVFP4: E4M3 block scale times the tensor scale), in the scale shape ([1] per tensor)")
        .def_property_readonly(
            "zero_points",
            [](const pb::object& self) -> pb::object {
                const Result& r = of(self).run.result;
                if (r.params.zeroPoints.empty()) return pb::none();
                const Shape shape = r.params.zeroPoints.size() == 1 ? Shape{1} : exportScaleShape(r.plan);
                return readOnlyView(r.params.zeroPoints.data(), pb::dtype::of<float>(), shape, self);
            },
            "Zero points (float32, in the scale shape), or None when symmetric")
        .def_property_readonly(
            "scale_codes",
            [](const pb::object& self) -> pb::object {
                const Result& r = of(self).run.result;
                if (r.params.scaleCodes.empty()) return pb::none();
                return readOnlyView(r.params.scaleCodes.data(), pb::dtype::of<std::uint8_t>(),
                                    exportScaleShape(r.plan), self);
            },
            "MX: the E8M0 scale codes; NVFP4: the E4M3 block-scale codes; None otherwise")
        .def_property_readonly(
            "tensor_scale",
            [](const QuantizeResult& r) -> pb::object {
                if (r.get().run.result.plan.spec.preset != Preset::NVFP4) return pb::none();
                return pb::float_(r.get().run.result.params.tensorScale);
            },
            "NVFP4's fp32 tensor scale; None for other presets")
        .def(
            "dequantize",
            [](const QuantizeResult& r) {
                const Result& res = r.get().run.result;
                std::vector<float> x;
                {
                    pb::gil_scoped_release release;
                    x = dequantizeReference(res.plan, res.params, res.codes);
                }
                return ownedArray(std::move(x), res.plan.ownShape());
            },
            "x̂ = the codes dequantized with the operator's arithmetic, float32 in x's shape")
        .def_property_readonly(
            "sqnr_db", [](const QuantizeResult& r) { return r.get().run.report.analysis.stats.sqnrDb(); })
        .def_property_readonly(
            "stats",
            [](const QuantizeResult& r) {
                return toPython(errorStatsJson(r.get().run.report.analysis.stats));
            },
            "The error statistics, as the report's \"stats\"")
        .def_property_readonly(
            "histograms",
            [](const QuantizeResult& r) {
                const TensorAnalysis& a = r.get().run.report.analysis;
                pb::dict d;
                d["error"] = histogramDict(a.error);
                d["abs_error_log"] = histogramDict(a.absErrorLog);
                d["values"] = histogramDict(a.values);
                d["scales"] = histogramDict(a.scales);
                return d;
            },
            "Histograms as dicts of NumPy arrays (edges, counts) and counts beyond them: error (x - x̂), "
            "abs_error_log (|x - x̂|, four bins to an octave), values (x), scales")
        .def_property_readonly(
            "clipping",
            [](const QuantizeResult& r) { return clippingDict(r.get().run.report.analysis.clipping); },
            "Per scale group (channel, group or block), NumPy arrays: count, clipped_low, clipped_high, "
            "clipped_fraction, flushed_to_zero, clip_error_sq, round_error_sq, sum_sq_x, max_abs_error, "
            "sqnr_db")
        .def_property_readonly(
            "report", [](const QuantizeResult& r) { return toPython(toJson(r.get().run.report)); },
            "The tensor's entry of a --report JSON (core/report/report_schema.md), as Python objects")
        .def_property_readonly(
            "plan", [](const QuantizeResult& r) { return toPython(toJson(r.get().run.result.plan)); },
            "The resolved plan: spec, convention, scale shape, code type")
        .def_property_readonly("notes", [](const QuantizeResult& r) { return r.get().run.result.plan.notes; })
        .def_property_readonly(
            "calibration_note",
            [](const QuantizeResult& r) { return r.get().run.result.params.calibrationNote; })
        .def_property_readonly("backend", [](const QuantizeResult& r) { return r.get().run.report.backend; })
        .def_property_readonly("shape",
                               [](const QuantizeResult& r) {
                                   const Shape& s = r.get().run.result.plan.ownShape();
                                   pb::tuple t(s.size());
                                   for (std::size_t i = 0; i < s.size(); ++i)
                                       t[i] = s[i];
                                   return t;
                               })
        .def("__repr__", [](const QuantizeResult& r) {
            const TensorReport& t = r.get().run.report;
            char sqnr[32];
            std::snprintf(sqnr, sizeof sqnr, "%.2f", t.analysis.stats.sqnrDb());
            return "<quantlens.QuantizeResult " + describe(t.plan.spec) + " " + toString(t.shape) + " on " +
                   t.backend + ", SQNR " + sqnr + " dB>";
        });

    pb::class_<CompareOutcome, std::shared_ptr<CompareOutcome>>(m, "CompareResult",
                                                                "One array quantized two ways, code by code.")
        .def_readonly("a", &CompareOutcome::a)
        .def_readonly("b", &CompareOutcome::b)
        .def_property_readonly(
            "comparison", [](const CompareOutcome& c) { return toPython(toJson(c.comparison)); },
            "The report's \"comparison\": mismatched codes, code differences, causes, verdict")
        .def_property_readonly("mismatched", [](const CompareOutcome& c) { return c.comparison.mismatched; })
        .def_property_readonly("verdict", [](const CompareOutcome& c) { return c.comparison.verdict; })
        .def_property_readonly(
            "mismatch_map",
            [](const CompareOutcome& c) {
                return copiedArray(c.mismatches.counts, c.mismatches.counts.empty()
                                                            ? Shape{0, 0}
                                                            : Shape{c.mismatches.rows, c.mismatches.cols});
            },
            "Where A and B differ over a coarse grid of the tensor (rows x cols; empty when they agree)")
        .def_property_readonly(
            "report", [](const CompareOutcome& c) { return toPython(c.report); },
            "The report `quantlens-cli compare --report` writes, as Python objects")
        .def("__repr__", [](const CompareOutcome& c) {
            return "<quantlens.CompareResult " + c.comparison.labelA + " vs " + c.comparison.labelB + ": " +
                   std::to_string(c.comparison.mismatched) + " of " + std::to_string(c.comparison.count) +
                   " codes differ>";
        });

    m.def("quantize", &quantize, pb::arg("x"), kQuantizeDoc);
    m.def(
        "_time_core_job", &timeCoreJob, pb::arg("x"), pb::arg("count"),
        "The benchmark's baseline: milliseconds of each of `count` runs of quantize(x, **spec)'s job in C++");
    m.def("compare", &compare, pb::arg("x"), pb::arg("spec_a"), pb::arg("spec_b"), pb::kw_only(),
          pb::arg("input_dtype") = pb::none(), pb::arg("name") = "x",
          R"(compare(x, spec_a, spec_b, *, input_dtype=None, name="x") -> CompareResult

Quantizes x two ways, each spec a dict of quantize()'s keywords (backend included), and compares the
codes and scales as `quantlens-cli compare` does (--preset-b: specs that differ in preset;
--backend-b: in backend; any other difference too). Each side calibrates itself unless its spec gives
scales.)");
}

} // namespace ql::py
