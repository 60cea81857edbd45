#include "report/report_read.h"

#include "base/error.h"
#include "quant/spec_json.h"
#include "quant/target.h"

#include <cmath>
#include <limits>
#include <optional>

namespace ql {
namespace {

using nlohmann::json;

const json& field(const json& j, const char* key, const char* where) {
    const auto it = j.find(key);
    if (it == j.end()) throw FileError(std::string(where) + " has no \"" + key + "\"");
    return *it;
}

// A number; null stands for NaN (the writer's jsonNumber).
double number(const json& j) {
    if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!j.is_number()) throw FileError("a number is expected, not " + j.dump());
    return j.get<double>();
}

std::int64_t whole(const json& j) {
    if (!j.is_number_integer()) throw FileError("a whole number is expected, not " + j.dump());
    return j.get<std::int64_t>();
}

const json& array(const json& j, const char* key, const char* where) {
    const json& a = field(j, key, where);
    if (!a.is_array()) throw FileError(std::string(where) + " \"" + key + "\" is not a list");
    return a;
}

// The same edges and counts: each count is added at its bin's middle (in the bin's own scale), the
// out-of-range ones beyond the ends.
Histogram histogramFromJson(const json& h) {
    const json& edges = array(h, "edges", "a histogram");
    const json& counts = array(h, "counts", "a histogram");
    if (edges.size() != counts.size() + 1 || counts.empty()) return {};
    Histogram::Scale scale = Histogram::Scale::Linear;
    if (!scaleNamed(h.value("scale", std::string("linear")), scale)) return {};
    const bool log = scale != Histogram::Scale::Linear;
    const double lo = number(edges.front()), hi = number(edges.back());
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || (log && !(lo > 0))) return {};
    const auto bins = static_cast<int>(counts.size());
    std::optional<Histogram> made = scale == Histogram::Scale::Octaves
                                        ? Histogram::octavesOver(lo, hi, bins)
                                        : std::optional<Histogram>(Histogram(lo, hi, bins, scale));
    if (!made) return {};
    Histogram& out = *made;
    const std::vector<double> e = out.edges();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        const std::int64_t n = whole(counts[i]);
        if (n > 0) out.add(log ? std::sqrt(e[i] * e[i + 1]) : 0.5 * (e[i] + e[i + 1]), n);
    }
    const double inf = std::numeric_limits<double>::infinity();
    if (const std::int64_t n = whole(field(h, "underflow", "a histogram")); n > 0)
        out.add(log ? 0.0 : -inf, n);
    if (const std::int64_t n = whole(field(h, "overflow", "a histogram")); n > 0) out.add(inf, n);
    return out;
}

ErrorStats statsFromJson(const json& stats) {
    const json& a = field(stats, "accumulators", "\"stats\" (a report written before QuantLens kept them)");
    ErrorStats::Sums s;
    s.count = whole(field(a, "count", "accumulators"));
    s.finite = whole(field(a, "finite", "accumulators"));
    s.nanX = whole(field(a, "nan_x", "accumulators"));
    s.infX = whole(field(a, "inf_x", "accumulators"));
    s.nonFiniteXhat = whole(field(a, "non_finite_xhat", "accumulators"));
    s.over1e3 = whole(field(a, "over_1e-3", "accumulators"));
    s.over5e3 = whole(field(a, "over_5e-3", "accumulators"));
    s.worstIndex = whole(field(a, "worst_index", "accumulators"));
    s.sumSqX = number(field(a, "sum_sq_x", "accumulators"));
    s.sumSqXhat = number(field(a, "sum_sq_xhat", "accumulators"));
    s.sumDot = number(field(a, "sum_dot", "accumulators"));
    s.sumSqErr = number(field(a, "sum_sq_err", "accumulators"));
    s.sumAbsErr = number(field(a, "sum_abs_err", "accumulators"));
    s.maxAbsErr = number(field(a, "max_abs_err", "accumulators"));
    return ErrorStats::fromSums(s);
}

ClippingStats clippingFromJson(const json& perChannel, const json& stats, const ErrorStats& e,
                               bool floatTarget) {
    const char* where = "\"per_channel\"";
    const json& low = array(perChannel, "clipped_low", where);
    const std::size_t n = low.size();
    auto column = [&](const char* key) -> const json& {
        const json& c = array(perChannel, key, where);
        if (c.size() != n) throw FileError(std::string(where) + " \"" + key + "\" has another length");
        return c;
    };
    const json &high = column("clipped_high"), &clipErr = column("clip_error_sq"),
               &roundErr = column("round_error_sq"), &maxErr = column("max_abs_error"),
               &ftz = column("flushed_to_zero"), &count = column("count"), &sumSqX = column("sum_sq_x");
    std::vector<GroupClipping> rows(n);
    for (std::size_t g = 0; g < n; ++g) {
        GroupClipping& r = rows[g];
        r.count = whole(count[g]);
        r.clippedLow = whole(low[g]);
        r.clippedHigh = whole(high[g]);
        r.flushedToZero = whole(ftz[g]);
        r.clipErrorSq = number(clipErr[g]);
        r.roundErrorSq = number(roundErr[g]);
        r.sumSqX = number(sumSqX[g]);
        r.maxAbsError = number(maxErr[g]);
    }
    GroupClipping total;
    total.count = e.finiteCount();
    total.clippedLow = whole(field(stats, "clipped_low", "\"stats\""));
    total.clippedHigh = whole(field(stats, "clipped_high", "\"stats\""));
    total.flushedToZero = whole(field(stats, "flushed_to_zero", "\"stats\""));
    total.clipErrorSq = number(field(stats, "clip_error_sq", "\"stats\""));
    total.roundErrorSq = number(field(stats, "round_error_sq", "\"stats\""));
    total.sumSqX = e.sums().sumSqX;
    total.maxAbsError = e.maxAbsError();
    const std::int64_t groups = whole(field(perChannel, "groups", where));
    return ClippingStats::listed(std::move(rows), static_cast<std::size_t>(std::max<std::int64_t>(groups, 0)),
                                 total, floatTarget);
}

Timing timingFromJson(const json& t) {
    Timing out;
    out.median.prepareMs = number(t.value("prepare_ms", json(0)));
    out.median.uploadMs = number(t.value("upload_ms", json(0)));
    out.median.kernelMs = number(t.value("kernel_ms", json(0)));
    out.median.downloadMs = number(t.value("download_ms", json(0)));
    out.median.totalMs = number(t.value("total_ms", json(0)));
    out.min.totalMs = number(t.value("total_min_ms", json(0)));
    out.max.totalMs = number(t.value("total_max_ms", json(0)));
    out.runs = static_cast<int>(whole(t.value("runs", json(0))));
    return out;
}

TensorReport readEntry(const json& t) {
    TensorReport r;
    r.name = field(t, "name", "a tensor entry").get<std::string>();
    for (const auto& d : array(t, "shape", "a tensor entry"))
        r.shape.push_back(whole(d));
    if (const auto dtype = dtypeFromName(t.value("dtype", std::string()))) r.dtype = *dtype;
    r.error = t.value("error", std::string());
    r.passedThrough = t.value("passed_through", std::string());
    if (!r.quantized()) return r;

    const json& spec = field(t, "spec", "a tensor entry");
    r.plan.spec = specFromJson(spec);
    try {
        r.plan = spec.contains("tensor_shape") ? planFromJson(spec) : resolveSpec(r.plan.spec, r.shape);
    } catch (const QuantError&) { // a spec that needed its calibration files: the spec alone is shown
        r.plan.shape = r.shape;
        r.plan.codeTarget = r.plan.spec.target;
    }
    r.backend = t.value("backend", std::string());
    r.params.calibrationNote = t.value("calibration_note", std::string());

    const json& stats = field(t, "stats", "a tensor entry");
    TensorAnalysis& a = r.analysis;
    a.stats = statsFromJson(stats);
    const json& hist = field(t, "histograms", "a tensor entry");
    a.error = histogramFromJson(field(hist, "error", "\"histograms\""));
    a.absErrorLog = histogramFromJson(field(hist, "abs_error_log", "\"histograms\""));
    const json& values = field(hist, "values", "\"histograms\"");
    a.values = histogramFromJson(values);
    for (const auto& g : array(values, "grid", "the value histogram"))
        a.grid.push_back(number(g));
    a.gridGroup = whole(field(values, "grid_group", "the value histogram"));
    a.gridEdges.low = number(field(values, "clip_low", "the value histogram"));
    a.gridEdges.high = number(field(values, "clip_high", "the value histogram"));
    a.scales = histogramFromJson(field(hist, "scales", "\"histograms\""));
    a.codes = CodeStats(r.plan.codeTarget);
    for (const auto& pair : array(hist, "codes", "\"histograms\"")) {
        if (!pair.is_array() || pair.size() != 2) throw FileError("a code count is not [code, count]");
        a.codes.add(static_cast<std::int32_t>(whole(pair[0])), whole(pair[1]));
    }
    const json& perChannel = field(t, "per_channel", "a tensor entry");
    a.clipping = clippingFromJson(perChannel, stats, a.stats, isFloatTarget(r.plan.codeTarget));
    for (const auto& s : array(perChannel, "scale", "\"per_channel\""))
        r.params.scales.push_back(static_cast<float>(number(s)));
    if (!r.plan.spec.symmetric)
        for (const auto& z : array(perChannel, "zero_point", "\"per_channel\""))
            r.params.zeroPoints.push_back(static_cast<float>(number(z)));
    if (t.contains("timing") && t["timing"].is_object()) r.timing = timingFromJson(t["timing"]);
    if (const auto it = t.find("importance"); it != t.end() && it->is_object()) {
        if (it->contains("accumulators")) {
            const json& acc = (*it)["accumulators"];
            WeightedError w;
            w.sumWeightedSqError = number(field(acc, "sum_weighted_sq_err", "\"importance\""));
            w.sumWeightedSqX = number(field(acc, "sum_weighted_sq_x", "\"importance\""));
            w.count = whole(field(acc, "count", "\"importance\""));
            w.importance = it->value("source", std::string());
            r.weighted = w;
        }
        r.importanceNote = it->value("note", std::string());
    }
    return r;
}

} // namespace

TensorReport reportFromJson(const json& entry) {
    if (!entry.is_object()) throw FileError("a tensor entry is not an object");
    try {
        return readEntry(entry);
    } catch (const json::exception& e) {
        throw FileError(std::string("a malformed entry: ") + e.what());
    } catch (const QuantError& e) {
        throw FileError(e.what());
    }
}

} // namespace ql
