#include "report/report.h"

#include "base/error.h"
#include "io/atomic_file.h"
#include "quant/spec_json.h"
#include "report/per_channel_report.h"
#include "report/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ql {
namespace {

using nlohmann::json;

json statsJson(const TensorAnalysis& a) {
    const ErrorStats& s = a.stats;
    const GroupClipping clip = a.clipping.total();
    json j = errorStatsJson(s);
    j.update({{"clipped_low", clip.clippedLow},
              {"clipped_high", clip.clippedHigh},
              {"clipped_fraction", jsonNumber(s.finiteCount() ? clip.clippedFraction() : std::nan(""))},
              {"clip_error_sq", jsonNumber(clip.clipErrorSq)},
              {"round_error_sq", jsonNumber(clip.roundErrorSq)},
              {"flushed_to_zero", clip.flushedToZero},
              {"codes_used", a.codes.codesUsed()},
              {"codes_possible", a.codes.possibleCodes()},
              {"entropy_bits", jsonNumber(a.codes.entropyBits())}});
    return j;
}

json histogramsJson(const TensorAnalysis& a) {
    json codes = json::array();
    for (const auto& [code, n] : a.codes.counts())
        codes.push_back({code, n});
    json grid = json::array();
    for (double g : a.grid)
        grid.push_back(jsonNumber(g));
    json values = toJson(a.values);
    values["grid"] = grid;
    values["grid_group"] = a.gridGroup;
    values["clip_low"] = jsonNumber(a.gridEdges.low);
    values["clip_high"] = jsonNumber(a.gridEdges.high);
    return {{"error", toJson(a.error)},
            {"abs_error_log", toJson(a.absErrorLog)},
            {"values", values},
            {"codes", codes},
            {"scales", toJson(a.scales)}};
}

json timingJson(const Timing& t) {
    return {{"prepare_ms", t.median.prepareMs}, {"upload_ms", t.median.uploadMs},
            {"kernel_ms", t.median.kernelMs},   {"download_ms", t.median.downloadMs},
            {"total_ms", t.median.totalMs},     {"total_min_ms", t.min.totalMs},
            {"total_max_ms", t.max.totalMs},    {"runs", t.runs}};
}

// A tensor's entry; its "per_channel" object only with `perChannel` (the file writer prints that one
// itself).
json tensorJson(const TensorReport& r, const ReportOptions& opt, bool perChannel) {
    json j = {{"name", r.name}, {"shape", r.shape}, {"dtype", std::string(nameOf(r.dtype))}};
    if (!r.error.empty()) {
        j["error"] = r.error;
        return j;
    }
    if (!r.passedThrough.empty()) {
        j["passed_through"] = r.passedThrough;
        return j;
    }
    j["spec"] = toJson(r.plan);
    if (!r.params.calibrationNote.empty()) j["calibration_note"] = r.params.calibrationNote;
    j["backend"] = r.backend;
    j["stats"] = statsJson(r.analysis);
    if (r.weighted) {
        const WeightedError& w = *r.weighted;
        j["stats"]["weighted_mse"] = jsonNumber(w.mse());
        j["stats"]["weighted_sqnr_db"] = jsonNumber(w.sqnrDb());
        j["importance"] = {{"source", w.importance},
                           {"accumulators",
                            {{"sum_weighted_sq_err", w.sumWeightedSqError},
                             {"sum_weighted_sq_x", w.sumWeightedSqX},
                             {"count", w.count}}}};
    } else if (!r.importanceNote.empty()) {
        j["importance"] = {{"note", r.importanceNote}};
    }
    j["histograms"] = histogramsJson(r.analysis);
    if (perChannel) j["per_channel"] = perChannelJson(r, opt);
    j["timing"] = timingJson(r.timing);
    return j;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string csvNumber(double v) {
    if (std::isnan(v)) return "";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

} // namespace

QuantParams reportedParams(const QuantParams& p, std::size_t maxGroups) {
    auto firstOf = [maxGroups](const std::vector<float>& v) {
        return std::vector<float>(v.begin(),
                                  v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), maxGroups)));
    };
    QuantParams kept;
    kept.scales = firstOf(p.scales);
    kept.zeroPoints = firstOf(p.zeroPoints);
    kept.tensorScale = p.tensorScale;
    kept.calibrationNote = p.calibrationNote;
    return kept;
}

json jsonNumber(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

json toJson(const Histogram& h) {
    json counts = json::array();
    for (auto c : h.counts())
        counts.push_back(c);
    json edges = json::array();
    for (double e : h.edges())
        edges.push_back(jsonNumber(e));
    return {{"scale", scaleName(h.scale())},
            {"edges", edges},
            {"counts", counts},
            {"underflow", h.underflow()},
            {"overflow", h.overflow()}};
}

json errorStatsJson(const ErrorStats& s) {
    const ErrorStats::Sums a = s.sums(); // the running sums every metric is computed from (report_read.h)
    return {{"count", s.count()},
            {"mse", jsonNumber(s.mse())},
            {"rmse", jsonNumber(s.rmse())},
            {"sqnr_db", jsonNumber(s.sqnrDb())},
            {"max_abs_error", jsonNumber(s.maxAbsError())},
            {"worst_index", s.worstIndex()},
            {"mean_abs_error", jsonNumber(s.meanAbsError())},
            {"rel_error", jsonNumber(s.relError())},
            {"cosine", jsonNumber(s.cosine())},
            {"rel_error_ratio_1e-3", jsonNumber(s.ratioOver1e3())},
            {"rel_error_ratio_5e-3", jsonNumber(s.ratioOver5e3())},
            {"nan_count", s.nanCount()},
            {"inf_count", s.infCount()},
            {"non_finite_output_count", s.nonFiniteOutputCount()},
            {"accumulators",
             {{"count", a.count},
              {"finite", a.finite},
              {"nan_x", a.nanX},
              {"inf_x", a.infX},
              {"non_finite_xhat", a.nonFiniteXhat},
              {"over_1e-3", a.over1e3},
              {"over_5e-3", a.over5e3},
              {"worst_index", a.worstIndex},
              {"sum_sq_x", a.sumSqX},
              {"sum_sq_xhat", a.sumSqXhat},
              {"sum_dot", a.sumDot},
              {"sum_sq_err", a.sumSqErr},
              {"sum_abs_err", a.sumAbsErr},
              {"max_abs_err", a.maxAbsErr}}}};
}

json toJson(const TensorReport& r, const ReportOptions& opt) {
    return tensorJson(r, opt, true);
}

json toJson(const Comparison& c) {
    json diff = json::object();
    for (const auto& [d, n] : c.codeDiff)
        diff[(d > 0 ? "+" : "") + std::to_string(d)] = n;
    json ulp = json::object();
    for (const auto& [u, n] : c.scaleUlpDiff)
        ulp[std::to_string(u)] = n;
    json examples = json::array();
    for (const auto& e : c.examples)
        examples.push_back({{"index", e.index},
                            {"x", jsonNumber(e.x)},
                            {"code_a", e.codeA},
                            {"code_b", e.codeB},
                            {"scale_a", jsonNumber(e.scaleA)},
                            {"scale_b", jsonNumber(e.scaleB)}});
    json causes = json::array();
    for (const auto& k : c.causes)
        causes.push_back(
            {{"name", k.name}, {"summary", k.summary}, {"detail", k.detail}, {"explained", k.explained}});
    return {{"a", c.labelA},
            {"b", c.labelB},
            {"count", c.count},
            {"mismatched", c.mismatched},
            {"code_diff", diff},
            {"first_mismatch", c.firstMismatch},
            {"worst_mismatch", c.worstMismatch},
            {"examples", examples},
            {"scales_compared", c.scaleCount},
            {"scale_mismatches", c.scaleMismatches},
            {"scale_ulp_diff", ulp},
            {"max_scale_ulp", c.maxScaleUlp},
            {"zero_point_mismatches", c.zeroPointMismatches},
            {"causes", causes},
            {"verdict", c.verdict}};
}

json reportJson(const std::string& file, const std::vector<TensorReport>& tensors,
                const Comparison* comparison, const ReportOptions& opt) {
    json list = json::array();
    for (const auto& t : tensors)
        list.push_back(toJson(t, opt));
    json j = {{"format_version", kReportFormatVersion}, {"file", file}, {"tensors", list}};
    if (comparison) j["comparison"] = toJson(*comparison);
    return j;
}

std::string reportCsv(const std::vector<TensorReport>& tensors) {
    std::ostringstream out;
    out << "name,shape,dtype,spec,backend,count,mse,rmse,sqnr_db,max_abs_error,mean_abs_error,rel_error,"
           "cosine,"
           "rel_error_ratio_1e-3,rel_error_ratio_5e-3,clipped_low,clipped_high,clipped_fraction,nan_count,"
           "inf_count,codes_used,entropy_bits,total_ms,runs,weighted_sqnr_db,error\n";
    for (const auto& t : tensors) {
        std::string shape = toString(t.shape);
        out << csvField(t.name) << ',' << csvField(shape) << ',' << nameOf(t.dtype) << ',';
        if (!t.quantized()) {
            out << ",,,,,,,,,,,,,,,,,,,,,,"
                << csvField(t.error.empty() ? "passed through: " + t.passedThrough : t.error) << '\n';
            continue;
        }
        const ErrorStats& s = t.analysis.stats;
        const GroupClipping clip = t.analysis.clipping.total();
        out << csvField(describe(t.plan.spec)) << ',' << csvField(t.backend) << ',' << s.count() << ','
            << csvNumber(s.mse()) << ',' << csvNumber(s.rmse()) << ',' << csvNumber(s.sqnrDb()) << ','
            << csvNumber(s.maxAbsError()) << ',' << csvNumber(s.meanAbsError()) << ','
            << csvNumber(s.relError()) << ',' << csvNumber(s.cosine()) << ',' << csvNumber(s.ratioOver1e3())
            << ',' << csvNumber(s.ratioOver5e3()) << ',' << clip.clippedLow << ',' << clip.clippedHigh << ','
            << csvNumber(s.finiteCount() ? clip.clippedFraction() : std::nan("")) << ',' << s.nanCount()
            << ',' << s.infCount() << ',' << t.analysis.codes.codesUsed() << ','
            << csvNumber(t.analysis.codes.entropyBits()) << ',' << csvNumber(t.timing.median.totalMs) << ','
            << t.timing.runs << ',' << (t.weighted ? csvNumber(t.weighted->sqnrDb()) : std::string())
            << ",\n";
    }
    return out.str();
}

namespace {

// Names from a file may hold bytes that are not UTF-8 (HDF5 allows any): JSON shows them as U+FFFD.
std::string dumped(const json& j) {
    return j.dump(1, ' ', false, json::error_handler_t::replace);
}

// `text` (a dump at depth 0) as it reads nested `depth` levels deep: raw newlines are only ever
// structure, since JSON strings escape theirs.
// Built in one copy: inserting each indent in place would move the rest of the text each time, a
// time quadratic in the report's size.
std::string nested(const std::string& text, int depth) {
    const std::string indent(static_cast<std::size_t>(depth), ' ');
    std::string out;
    out.reserve(text.size() + text.size() / 8 * indent.size());
    std::size_t from = 0;
    for (std::size_t at; (at = text.find('\n', from)) != std::string::npos; from = at + 1) {
        out.append(text, from, at + 1 - from);
        out += indent;
    }
    out.append(text, from);
    return out;
}

// A tensor's entry as dumped(toJson(r)) reads nested two levels deep (an item of "tensors"), its
// per-channel columns printed straight from the rows into their place among the sorted keys: each
// column passed to `put` after the text before it, the rest of the entry left in `out`.
void appendTensorText(std::string& out, const TensorReport& r, const ReportOptions& opt, const TextPut& put) {
    const json j = tensorJson(r, opt, false);
    if (!r.quantized()) {
        out += nested(dumped(j), 2);
        return;
    }
    const std::string perChannel = "per_channel";
    bool placed = false;
    JsonObjectText object(out, 2);
    for (const auto& [k, value] : j.items()) {
        if (!placed && perChannel < k) {
            object.key(perChannel);
            appendPerChannelText(out, r, opt, 3, &put);
            placed = true;
        }
        object.key(k);
        out += nested(dumped(value), 3);
    }
    if (!placed) {
        object.key(perChannel);
        appendPerChannelText(out, r, opt, 3, &put);
    }
    object.close();
}

// What reportJson(...) dumps, byte for byte, written a tensor at a time: a whole-model report (4096
// clipping rows a tensor) costs one tensor's tree, so memory follows the largest tensor, not the model.
// The keys come in the order the library's sorted objects print them.
void writeJsonReport(AtomicFile& out, const std::string& file, const std::vector<TensorReport>& tensors,
                     const Comparison* comparison) {
    const TextPut put = [&out](std::string_view text) { out.write(text.data(), text.size()); };
    put("{\n");
    if (comparison) put(" \"comparison\": " + nested(dumped(toJson(*comparison)), 1) + ",\n");
    put(" \"file\": " + dumped(json(file)) +
        ",\n \"format_version\": " + std::to_string(kReportFormatVersion) + ",\n \"tensors\": ");
    if (tensors.empty()) {
        put("[]\n}\n");
        return;
    }
    put("[\n");
    const ReportOptions options;
    std::string text;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        text = "  ";
        appendTensorText(text, tensors[i], options, put);
        text += i + 1 < tensors.size() ? ",\n" : "\n";
        put(text);
    }
    put(" ]\n}\n");
}

} // namespace

void writeReport(const std::string& path, const std::string& file, const std::vector<TensorReport>& tensors,
                 const Comparison* comparison) {
    const std::filesystem::path target(path);
    const std::string ext = target.extension().string();
    if (ext != ".json" && ext != ".csv") throw FileError(path + ": report must end in .json or .csv");
    // A uniquely named temporary in the same folder, renamed into place: a reader never sees half a
    // report, two runs never share a temporary, and the file being read is never the target.
    AtomicFile out(path, file);
    if (ext == ".json") {
        writeJsonReport(out, file, tensors, comparison);
    } else {
        const std::string text = reportCsv(tensors);
        out.write(text.data(), text.size());
    }
    out.commit();
}

} // namespace ql
