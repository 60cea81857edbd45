#include "report/model_table.h"

#include "base/error.h"
#include "base/whole_number.h"
#include "io/printable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ql {
namespace {

// Key where larger = worse; NaN (not measurable) sorts after everything else. A tensor that turns
// finite values into NaN/Inf is worse than any figure its finite values give.
double badness(const ModelRow& r, ModelColumn c) {
    const bool errorColumn = c != ModelColumn::Name && c != ModelColumn::Clipped && c != ModelColumn::TotalMs;
    if (r.nonFiniteOutputs > 0 && errorColumn) return std::numeric_limits<double>::infinity();
    switch (c) {
    case ModelColumn::Name:
        return 0;
    case ModelColumn::Sqnr:
        return -r.sqnrDb;
    case ModelColumn::WeightedSqnr:
        return -r.weightedSqnrDb;
    case ModelColumn::MaxAbsError:
        return r.maxAbsError;
    case ModelColumn::RelError:
        return r.relError;
    case ModelColumn::Cosine:
        return -r.cosine;
    case ModelColumn::Clipped:
        return r.clippedFraction;
    case ModelColumn::TotalMs:
        return r.totalMs;
    }
    return 0;
}

std::string padded(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

} // namespace

std::string tableNumber(double v, const char* fmt) {
    if (std::isnan(v)) return "-";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

std::vector<ModelRow> modelRows(const std::vector<TensorReport>& reports) {
    std::vector<ModelRow> rows;
    for (const auto& r : reports) {
        ModelRow row;
        row.name = r.name;
        row.shape = toString(r.shape);
        if (r.quantized() && r.plan.viewed()) row.shape += " as " + toString(r.plan.shape); // its axes' shape
        row.error = r.error;
        row.kept = r.passedThrough;
        if (r.quantized() && r.plan.spec.scheme != Scheme::PerTensor) row.axes = r.plan.spec.axes;
        const ErrorStats& s = r.analysis.stats;
        row.sqnrDb = s.sqnrDb();
        if (r.weighted) row.weightedSqnrDb = r.weighted->sqnrDb();
        row.maxAbsError = s.maxAbsError();
        row.relError = s.relError();
        row.cosine = s.cosine();
        row.clippedFraction = s.finiteCount() ? r.analysis.clipping.total().clippedFraction() : std::nan("");
        row.nonFinite = s.nanCount() + s.infCount();
        row.nonFiniteOutputs = s.nonFiniteOutputCount();
        row.codesUsed = r.analysis.codes.codesUsed();
        row.totalMs = r.timing.median.totalMs;
        rows.push_back(std::move(row));
    }
    return rows;
}

namespace {

// A number of a report entry's "stats"; `null` stands for `whenNull` (NaN or an infinity).
double statOf(const nlohmann::json& stats, const char* key, double whenNull) {
    const auto it = stats.find(key);
    if (it == stats.end() || it->is_null()) return whenNull;
    if (!it->is_number()) throw FileError(std::string("\"") + key + "\" is not a number");
    return it->get<double>();
}

// A count of a report entry (absent or null: 0). A report is a file: 1e30 or 2.5 there is refused,
// never converted (a float beyond int64 has no integer value).
std::int64_t countOf(const nlohmann::json& stats, const char* key) {
    const auto it = stats.find(key);
    if (it == stats.end() || it->is_null()) return 0;
    const auto n = wholeNumber(*it);
    if (!n || *n < 0) throw FileError(std::string("\"") + key + "\" is " + it->dump() + ", not a count");
    return *n;
}

} // namespace

double reportStat(const nlohmann::json& stats, const std::string& key) {
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    const double finite =
        statOf(stats, "count", 0) - statOf(stats, "nan_count", 0) - statOf(stats, "inf_count", 0);
    if (key ==
        "sqnr_db") // null: nothing finite to measure (NaN), an exact reconstruction (+inf), or a zero signal
        return statOf(stats, "sqnr_db", finite <= 0 ? nan : statOf(stats, "mse", nan) == 0.0 ? inf : -inf);
    if (key == "rel_error") return statOf(stats, "rel_error", finite <= 0 ? nan : inf);
    return statOf(stats, key.c_str(), nan);
}

namespace {

// An entry's weighted SQNR from its accumulators (null in "stats" is ambiguous: exact or empty).
double weightedSqnrOf(const nlohmann::json& t) {
    const auto it = t.find("importance");
    if (it == t.end() || !it->is_object() || !it->contains("accumulators")) return std::nan("");
    const auto& a = (*it)["accumulators"];
    WeightedError w;
    w.sumWeightedSqError = statOf(a, "sum_weighted_sq_err", std::nan(""));
    w.sumWeightedSqX = statOf(a, "sum_weighted_sq_x", std::nan(""));
    w.count = countOf(a, "count");
    return w.sqnrDb();
}

ModelRow rowOf(const nlohmann::json& t) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
        throw FileError("an entry without a name");
    ModelRow row;
    row.name = t["name"].get<std::string>();
    if (t.contains("shape") && t["shape"].is_array()) {
        Shape shape;
        for (const auto& d : t["shape"])
            if (d.is_number_integer()) shape.push_back(d.get<std::int64_t>());
        row.shape = toString(shape);
    }
    row.error = t.value("error", std::string());
    row.kept = t.value("passed_through", std::string());
    if (!row.error.empty() || !row.kept.empty()) return row;
    const auto spec = t.find("spec");
    if (spec != t.end() && spec->is_object() &&
        spec->value("scheme", std::string()) != nameOf(Scheme::PerTensor))
        for (const auto& a : spec->value("axes", nlohmann::json::array()))
            if (a.is_number_integer()) row.axes.push_back(a.get<int>());
    // A tensor quantized through a view (quant/weight_view.h): its axes are the view's, so it is shown.
    if (spec != t.end() && spec->is_object() && spec->contains("tensor_shape") && spec->contains("shape")) {
        Shape view;
        for (const auto& d : (*spec)["shape"])
            if (d.is_number_integer()) view.push_back(d.get<std::int64_t>());
        row.shape += " as " + toString(view);
    }
    if (!t.contains("stats") || !t["stats"].is_object())
        throw FileError("tensor '" + row.name + "' has no \"stats\"");
    const auto& s = t["stats"];
    const double nan = std::nan("");
    row.sqnrDb = reportStat(s, "sqnr_db");
    row.weightedSqnrDb = weightedSqnrOf(t);
    row.maxAbsError = reportStat(s, "max_abs_error");
    row.relError = reportStat(s, "rel_error");
    row.cosine = reportStat(s, "cosine");
    row.clippedFraction = reportStat(s, "clipped_fraction");
    const std::int64_t nans = countOf(s, "nan_count"), infs = countOf(s, "inf_count");
    if (nans > std::numeric_limits<std::int64_t>::max() - infs)
        throw FileError("tensor '" + row.name + "': \"nan_count\" and \"inf_count\" are not counts");
    row.nonFinite = nans + infs;
    row.nonFiniteOutputs = countOf(s, "non_finite_output_count");
    row.codesUsed = countOf(s, "codes_used");
    if (t.contains("timing") && t["timing"].is_object()) row.totalMs = statOf(t["timing"], "total_ms", nan);
    return row;
}

} // namespace

std::vector<ModelRow> modelRows(const nlohmann::json& tensors, const std::string& file) {
    if (!tensors.is_array()) throw FileError(file + ": no \"tensors\" list");
    std::vector<ModelRow> rows;
    for (const auto& t : tensors) {
        // Each fault named with the file and, where it has one, the tensor.
        const std::string where = file + (t.is_object() && t.contains("name") && t["name"].is_string()
                                              ? ": tensor '" + t["name"].get<std::string>() + "'"
                                              : std::string());
        try {
            rows.push_back(rowOf(t));
        } catch (const FileError& e) {
            throw FileError(where + ": " + e.what());
        } catch (const nlohmann::json::exception& e) { // a field of the wrong kind
            throw FileError(where + ": not a well-formed report entry: " + e.what());
        }
    }
    return rows;
}

void sortRows(std::vector<ModelRow>& rows, ModelColumn column, bool worstFirst) {
    std::stable_sort(rows.begin(), rows.end(), [&](const ModelRow& a, const ModelRow& b) {
        if (a.error.empty() != b.error.empty()) return !a.error.empty(); // failures always on top
        if (a.kept.empty() != b.kept.empty()) return a.kept.empty();     // passed-through tensors last
        if (column == ModelColumn::Name) return worstFirst ? a.name < b.name : a.name > b.name;
        const double ka = badness(a, column), kb = badness(b, column);
        if (std::isnan(ka) != std::isnan(kb)) return std::isnan(kb);
        if (ka != kb && !std::isnan(ka)) return worstFirst ? ka > kb : ka < kb;
        return a.name < b.name;
    });
}

bool anyWeighted(const std::vector<ModelRow>& rows) {
    return std::any_of(rows.begin(), rows.end(),
                       [](const ModelRow& r) { return !std::isnan(r.weightedSqnrDb); });
}

void sortWorstFirst(std::vector<ModelRow>& rows) {
    sortRows(rows, anyWeighted(rows) ? ModelColumn::WeightedSqnr : ModelColumn::Sqnr, true);
}

std::string nonFiniteNote(std::int64_t inFile, std::int64_t reconstructed) {
    auto values = [](std::int64_t n, const char* what) {
        return std::to_string(n) + (n == 1 ? " value " : " values ") + what;
    };
    std::string note;
    if (inFile > 0) note = values(inFile, "NaN/Inf in the file");
    if (reconstructed > 0)
        note += (note.empty() ? "" : " and ") + values(reconstructed, "reconstructed as NaN/Inf");
    return note.empty() ? note : note + ", left out of the figures";
}

std::string formatModelTable(const std::vector<ModelRow>& rowsIn) {
    // Rows may come from a report or a resume journal: every text shown as printable() shows it.
    std::vector<ModelRow> rows = rowsIn;
    for (ModelRow& r : rows)
        for (std::string* text : {&r.name, &r.shape, &r.error, &r.kept})
            *text = printable(*text);
    // Names wider than kWide get a line of their own, so the columns stay aligned.
    constexpr std::size_t kWide = 60;
    std::size_t nameWidth = 6;
    for (const auto& r : rows)
        if (r.name.size() <= kWide) nameWidth = std::max(nameWidth, r.name.size());
    const bool weighted = anyWeighted(rows);
    char line[512];
    std::snprintf(line, sizeof line, "%-*s %-16s %9s%s %11s %10s %9s %8s %6s %9s\n",
                  static_cast<int>(nameWidth), "tensor", "shape", "SQNR dB", weighted ? " w.SQNR dB" : "",
                  "max |err|", "rel err", "cosine", "clip %", "codes", "ms");
    std::string out = line;
    for (const auto& r : rows) {
        if (!r.error.empty()) {
            out += r.name + "  FAILED: " + r.error + "\n";
            continue;
        }
        if (!r.kept.empty()) {
            out += r.name + "  kept unquantized: " + r.kept + "\n";
            continue;
        }
        const bool wide = r.name.size() > nameWidth;
        if (wide) out += r.name + "\n";
        const std::string w = weighted ? " " + padded(tableNumber(r.weightedSqnrDb, "%.2f"), 9) : "";
        std::snprintf(
            line, sizeof line, "%-*s %-16s %9s%s %11s %10s %9s %8s %6lld %9s\n", static_cast<int>(nameWidth),
            wide ? "" : r.name.c_str(), r.shape.c_str(), tableNumber(r.sqnrDb, "%.2f").c_str(), w.c_str(),
            tableNumber(r.maxAbsError, "%.4g").c_str(), tableNumber(r.relError, "%.3g").c_str(),
            tableNumber(r.cosine, "%.6f").c_str(), tableNumber(100.0 * r.clippedFraction, "%.3f").c_str(),
            static_cast<long long>(r.codesUsed), tableNumber(r.totalMs, "%.2f").c_str());
        out += line;
        if (const std::string note = nonFiniteNote(r.nonFinite, r.nonFiniteOutputs); !note.empty())
            out += "  ! " + note + "\n";
    }
    return out;
}

} // namespace ql
