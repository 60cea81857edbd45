#include "report/check.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/printable.h"
#include "report/model_table.h"
#include "report/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

namespace ql {
namespace {

constexpr std::uint64_t kMaxRulesBytes = 1 << 20; // a rules file is a few lines

using nlohmann::json;

// Every metric a rule can name: where it is in a report, and its short alias.
struct Metric {
    const char* name;
    const char* alias;
    bool comparison; // a number of "comparison" (A vs B), not of a tensor's "stats"
};
constexpr Metric kMetrics[] = {
    {"sqnr_db", "sqnr", false},
    {"weighted_sqnr_db", "weighted_sqnr", false}, // with importance (--importance); NaN without
    {"weighted_mse", "", false},
    {"cosine", "", false},
    {"max_abs_error", "max_abs", false},
    {"mean_abs_error", "mean_abs", false},
    {"rel_error", "rel", false},
    {"mse", "", false},
    {"rmse", "", false},
    {"rel_error_ratio_1e-3", "ratio_1e-3", false},
    {"rel_error_ratio_5e-3", "ratio_5e-3", false},
    {"clipped_fraction", "clipped", false},
    {"clipped_low", "", false},
    {"clipped_high", "", false},
    {"flushed_to_zero", "", false},
    {"nan_count", "", false},
    {"inf_count", "", false},
    {"non_finite_output_count", "", false},
    {"codes_used", "", false},
    {"entropy_bits", "", false},
    {"count", "", false},
    {"max_ulp", "", false},               // diff reports
    {"non_finite_mismatches", "", false}, // diff reports: NaN/Inf not the same on both sides
    {"code_mismatches", "", false},       // diff reports' "codes", when both sides' codes were compared
    {"max_code_diff", "", false},
    {"code_scale_mismatches", "", false},
    {"code_zero_point_mismatches", "", false},
    {"mismatched", "mismatched_codes", true},
    {"scale_mismatches", "", true},
    {"max_scale_ulp", "", true},
    {"zero_point_mismatches", "", true},
};

const Metric* findMetric(const std::string& name) {
    for (const Metric& m : kMetrics)
        if (name == m.name || (*m.alias && name == m.alias)) return &m;
    return nullptr;
}

// Tokens: names (letters, digits, _ . -), numbers, operators, parentheses.
struct Lexer {
    const std::string& text;
    std::size_t pos = 0;

    void skipSpace() {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
            ++pos;
    }
    bool done() {
        skipSpace();
        return pos >= text.size();
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw QuantError("rule '" + text + "': " + what + " at column " + std::to_string(pos + 1));
    }
    std::string name() {
        skipSpace();
        const std::size_t start = pos;
        while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) ||
                                     text[pos] == '_' || text[pos] == '.' || text[pos] == '-'))
            ++pos;
        if (start == pos) fail("a name is expected");
        return text.substr(start, pos - start);
    }
    bool accept(char c) {
        skipSpace();
        if (pos < text.size() && text[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    std::string op() {
        skipSpace();
        for (const char* o : {"<=", ">=", "==", "!=", "<", ">"})
            if (text.compare(pos, std::char_traits<char>::length(o), o) == 0) {
                pos += std::char_traits<char>::length(o);
                return o;
            }
        fail("a comparison (<, <=, >, >=, ==, !=) is expected");
    }
    double number() {
        skipSpace();
        const std::size_t start = pos;
        while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) && text[pos] != ')')
            ++pos;
        const std::string word = text.substr(start, pos - start);
        if (word == "inf" || word == "+inf") return std::numeric_limits<double>::infinity();
        if (word == "-inf") return -std::numeric_limits<double>::infinity();
        char* end = nullptr;
        const double v = std::strtod(word.c_str(), &end);
        if (word.empty() || end != word.c_str() + word.size() || std::isnan(v)) {
            pos = start;
            fail("a number is expected");
        }
        return v;
    }
};

bool compare(double v, const std::string& op, double limit) {
    if (std::isnan(v)) return false; // undefined: satisfies nothing
    if (op == "<") return v < limit;
    if (op == "<=") return v <= limit;
    if (op == ">") return v > limit;
    if (op == ">=") return v >= limit;
    if (op == "==") return v == limit;
    return v != limit;
}

std::string number(double v) {
    if (std::isnan(v)) return "undefined";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// The values of one subject (a tensor's stats, or a comparison), by canonical metric name.
using Values = std::map<std::string, double>;

// A metric of an object: absent or null is undefined (NaN); anything but a number is an error, so a
// gate never passes a value it could not read.
double numberOrNull(const json& object, const std::string& key) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::nan("");
    if (!it->is_number()) throw FileError("\"" + key + "\" is not a number");
    return it->get<double>();
}

// A tensor entry's values: its "stats", and a diff's "codes" (metrics named code_* / max_code_diff).
Values tensorValues(const json& t) {
    Values v;
    const auto codes = t.find("codes");
    for (const Metric& m : kMetrics) {
        if (m.comparison) continue;
        if (codes != t.end() && codes->is_object() && codes->contains(m.name))
            v[m.name] = numberOrNull(*codes, m.name);
        else
            v[m.name] = reportStat(t["stats"], m.name);
    }
    return v;
}

// A run's tensor as its report would read back: the values report.cpp writes, where JSON holds
// what it can (a non-finite number is null, undefined, but for the SQNR and relative error that
// reportStat tells apart), so a table checked in the app and its report checked by the CLI agree.
Values tensorValues(const TensorReport& r) {
    const ErrorStats& s = r.analysis.stats;
    const GroupClipping clip = r.analysis.clipping.total();
    Values v;
    for (const Metric& m : kMetrics)
        if (!m.comparison) v[m.name] = std::nan("");
    auto set = [&v](const char* key, double x) {
        const bool kept =
            std::isfinite(x) || std::string_view(key) == "sqnr_db" || std::string_view(key) == "rel_error";
        v[key] = kept ? x : std::nan("");
    };
    set("count", static_cast<double>(s.count()));
    set("mse", s.mse());
    set("rmse", s.rmse());
    set("sqnr_db", s.sqnrDb());
    set("max_abs_error", s.maxAbsError());
    set("mean_abs_error", s.meanAbsError());
    set("rel_error", s.relError());
    set("cosine", s.cosine());
    set("rel_error_ratio_1e-3", s.ratioOver1e3());
    set("rel_error_ratio_5e-3", s.ratioOver5e3());
    set("nan_count", static_cast<double>(s.nanCount()));
    set("inf_count", static_cast<double>(s.infCount()));
    set("non_finite_output_count", static_cast<double>(s.nonFiniteOutputCount()));
    set("clipped_low", static_cast<double>(clip.clippedLow));
    set("clipped_high", static_cast<double>(clip.clippedHigh));
    set("clipped_fraction", s.finiteCount() ? clip.clippedFraction() : std::nan(""));
    set("flushed_to_zero", static_cast<double>(clip.flushedToZero));
    set("codes_used", static_cast<double>(r.analysis.codes.codesUsed()));
    set("entropy_bits", r.analysis.codes.entropyBits());
    if (r.weighted) {
        set("weighted_mse", r.weighted->mse());
        set("weighted_sqnr_db", r.weighted->sqnrDb());
    }
    return v;
}

Values comparisonValues(const json& c) {
    Values v;
    for (const Metric& m : kMetrics)
        if (m.comparison) {
            v[m.name] = numberOrNull(c, m.name);
        }
    return v;
}

// A clause holds when all its comparisons do; the rule when any clause does. `seen` gets the
// values the holding clause compared, for the message.
bool holds(const CheckRule& rule, const std::function<double(const CheckRule::Comparison&)>& value,
           std::string& seen) {
    for (const auto& clause : rule.clauses()) {
        bool all = true;
        std::string values;
        for (const auto& c : clause) {
            const double v = value(c);
            all = all && compare(v, c.op, c.value);
            values += (values.empty() ? "" : ", ") +
                      (c.aggregate.empty() ? c.metric : c.aggregate + "(" + c.metric + ")") + " = " +
                      number(v);
        }
        if (all) {
            seen = values;
            return true;
        }
    }
    return false;
}

bool appliesTo(const CheckRule& rule, bool comparison) {
    for (const auto& clause : rule.clauses())
        for (const auto& c : clause)
            if (findMetric(c.metric)->comparison != comparison) return false;
    return true;
}

// Text for XML and HTML, from a file or holding what a file named: printable() first (no control
// character, U+FFFE/U+FFFF, bidi override or byte of broken UTF-8 is left, none of which XML 1.0
// allows or a page should act on), then the markup characters as entities.
std::string escapeXml(const std::string& text) {
    const std::string s = printable(text);
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

// The error histogram as bars on a log scale, in SVG, for the HTML page.
std::string histogramSvg(const json& h) {
    if (!h.is_object() || !h.contains("counts") || !h["counts"].is_array() || h["counts"].empty()) return {};
    const auto& counts = h["counts"];
    double top = 1;
    for (const auto& c : counts)
        if (c.is_number()) top = std::max(top, c.get<double>());
    const double width = 480, height = 120, bar = width / static_cast<double>(counts.size());
    std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='480' height='120' class='hist'>";
    for (std::size_t i = 0; i < counts.size(); ++i) {
        const double n = counts[i].is_number() ? counts[i].get<double>() : 0;
        if (n <= 0) continue;
        const double hgt = height * std::log10(1 + n) / std::log10(1 + top);
        char rect[160];
        std::snprintf(rect, sizeof rect, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f'/>",
                      static_cast<double>(i) * bar, height - hgt, std::max(bar - 0.5, 0.5), hgt);
        svg += rect;
    }
    return svg + "</svg>";
}

} // namespace

CheckRule CheckRule::parse(const std::string& text) {
    CheckRule rule;
    rule.m_text = text;
    Lexer lex{text};
    if (lex.done()) throw QuantError("an empty rule");
    std::vector<Comparison> clause;
    bool sawTensorMetric = false;
    while (true) {
        Comparison c;
        std::string word = lex.name();
        if (lex.accept('(')) {
            if (word != "min" && word != "max" && word != "mean" && word != "sum")
                lex.fail("'" + word + "' is not an aggregate (min, max, mean, sum)");
            c.aggregate = word;
            word = lex.name();
            if (!lex.accept(')')) lex.fail("')' is expected");
        }
        const Metric* m = findMetric(word);
        if (!m) {
            std::string names;
            for (const auto& n : metricNames())
                names += (names.empty() ? "" : ", ") + n;
            throw QuantError("rule '" + text + "': unknown metric '" + word + "' (choose " + names + ")");
        }
        c.metric = m->name;
        c.op = lex.op();
        c.value = lex.number();
        rule.m_modelWide = rule.m_modelWide || !c.aggregate.empty();
        sawTensorMetric = sawTensorMetric || c.aggregate.empty();
        clause.push_back(c);
        if (lex.done()) break;
        const std::string joiner = lex.name();
        if (joiner == "or") {
            rule.m_clauses.push_back(std::move(clause));
            clause.clear();
        } else if (joiner != "and") {
            lex.fail("'and' or 'or' is expected, not '" + joiner + "'");
        }
    }
    rule.m_clauses.push_back(std::move(clause));
    if (rule.m_modelWide && sawTensorMetric)
        throw QuantError("rule '" + text + "': mixes model-wide aggregates with per-tensor metrics");
    bool comparison = false, tensor = false;
    for (const auto& cl : rule.m_clauses)
        for (const auto& c : cl)
            (findMetric(c.metric)->comparison ? comparison : tensor) = true;
    if (comparison && tensor)
        throw QuantError("rule '" + text + "': mixes comparison metrics with tensor metrics");
    if (comparison && rule.m_modelWide)
        throw QuantError("rule '" + text + "': comparison metrics have no aggregates");
    return rule;
}

std::vector<CheckRule> readRules(const std::string& path) {
    std::istringstream in(readSmallFile(path, kMaxRulesBytes, "a rules file"));
    std::vector<CheckRule> rules;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            rules.push_back(CheckRule::parse(line));
        } catch (const QuantError& e) {
            throw FileError(path + ":" + std::to_string(n) + ": " + e.what());
        }
    }
    if (rules.empty()) throw FileError(path + ": holds no rule");
    return rules;
}

std::vector<std::string> metricNames() {
    std::vector<std::string> names;
    for (const Metric& m : kMetrics)
        names.push_back(*m.alias ? std::string(m.name) + " (" + m.alias + ")" : m.name);
    return names;
}

int CheckResult::failed() const {
    return static_cast<int>(std::count_if(subjects.begin(), subjects.end(),
                                          [](const CheckSubject& s) { return s.status == "fail"; }));
}

CheckReport checkReportOf(const json& report) {
    if (!report.is_object() || !report.contains("tensors") || !report["tensors"].is_array())
        throw FileError("not a QuantLens report (no \"tensors\" list)");
    if (report["tensors"].empty()) throw FileError("the report lists no tensor: nothing to check");
    CheckReport typed;
    typed.file =
        report.contains("file") && report["file"].is_string() ? report["file"].get<std::string>() : "";
    const json* comparison =
        report.contains("comparison") && report["comparison"].is_object() ? &report["comparison"] : nullptr;
    for (const auto& t : report["tensors"]) {
        if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
            throw FileError("a tensor entry has no name");
        CheckEntry e;
        e.name = t["name"].get<std::string>();
        if (comparison && !typed.comparison) {
            typed.comparison = CheckComparison{
                comparison->value("a", std::string("A")), comparison->value("b", std::string("B")), {}};
        }
        if (t.contains("passed_through")) {
            e.passedThrough = true;
        } else if (t.contains("error")) {
            e.error = t.value("error", std::string());
            e.failed = true;
        } else {
            if (!t.contains("stats") || !t["stats"].is_object())
                throw FileError("tensor '" + printable(e.name) + "' has no \"stats\"");
            e.values = tensorValues(t);
            if (e.values.at("non_finite_mismatches") > 0) // a diff's: said in the failure
                e.values["non_finite_count_b"] = reportStat(t["stats"], "non_finite_count_b");
        }
        typed.tensors.push_back(std::move(e));
    }
    if (comparison) typed.comparison->values = comparisonValues(*comparison);
    return typed;
}

CheckReport checkReportOf(const std::string& file, const std::vector<TensorReport>& tensors) {
    CheckReport typed;
    typed.file = file;
    for (const TensorReport& r : tensors) {
        CheckEntry e;
        e.name = r.name;
        e.failed = !r.error.empty();
        e.error = r.error;
        e.passedThrough = !e.failed && !r.passedThrough.empty();
        if (r.quantized()) e.values = tensorValues(r);
        typed.tensors.push_back(std::move(e));
    }
    return typed;
}

CheckResult runChecks(const json& report, const std::vector<CheckRule>& rules) {
    return runChecks(checkReportOf(report), rules);
}

CheckResult runChecks(const CheckReport& report, const std::vector<CheckRule>& rules) {
    if (report.tensors.empty()) throw FileError("the report lists no tensor: nothing to check");
    CheckResult result;
    result.file = report.file;
    // A compare report lists the tensor twice, A then B: their labels tell them apart.
    const std::optional<CheckComparison>& comparison = report.comparison;
    std::map<std::string, int> seen;
    std::vector<const Values*> quantized;
    int index = -1;
    for (const CheckEntry& t : report.tensors) {
        ++index;
        CheckSubject s;
        s.name = t.name;
        s.entry = index;
        if (comparison) {
            const int side = seen[s.name]++;
            s.name += " (" + (side == 0 ? comparison->a : comparison->b) + ")";
        } else if (seen[s.name]++ > 0) {
            s.name += " (" + std::to_string(seen[s.name]) + ")";
        }
        if (t.passedThrough) {
            s.status = "kept";
            result.subjects.push_back(std::move(s));
            continue;
        }
        if (t.failed) {
            s.failures.push_back("not measured: " + t.error);
        } else {
            const Values& v = t.values;
            quantized.push_back(&v);
            // Finite weights that come back NaN/Inf did not quantize, whatever the finite rest gives. A
            // diff's NaN/Inf on one side only (either side) are left out of every figure a rule can
            // name, so no rule can pass the pair: it is not bit-identical, nor within any tolerance.
            const double broken = v.at("non_finite_output_count");
            const double oneSided = v.at("non_finite_mismatches");
            if (oneSided > 0)
                s.failures.push_back(number(oneSided) + (oneSided == 1 ? " value" : " values") +
                                     " NaN/Inf on one side only or unlike (A holds " +
                                     number(v.at("nan_count") + v.at("inf_count")) + " NaN/Inf, B " +
                                     number(v.at("non_finite_count_b")) +
                                     "): not bit-identical, and left out of every figure");
            else if (broken > 0)
                s.failures.push_back("reconstructs " + number(broken) + " finite values as NaN or infinity");
            for (const auto& rule : rules) {
                std::string values;
                if (!rule.modelWide() && appliesTo(rule, false) &&
                    holds(
                        rule, [&](const CheckRule::Comparison& c) { return v.at(c.metric); }, values))
                    s.failures.push_back(rule.text() + " (" + values + ")");
            }
        }
        s.status = s.failures.empty() ? "pass" : "fail";
        result.subjects.push_back(std::move(s));
    }
    if (comparison) {
        CheckSubject s;
        s.name = report.tensors[0].name + ": " + comparison->a + " vs " + comparison->b;
        const Values& v = comparison->values;
        for (const auto& rule : rules) {
            std::string values;
            if (appliesTo(rule, true) &&
                holds(
                    rule, [&](const CheckRule::Comparison& k) { return v.at(k.metric); }, values))
                s.failures.push_back(rule.text() + " (" + values + ")");
        }
        s.status = s.failures.empty() ? "pass" : "fail";
        result.subjects.push_back(std::move(s));
    }
    bool anyModelWide = false;
    CheckSubject model{"model", "pass", {}};
    for (const auto& rule : rules) {
        if (!rule.modelWide()) continue;
        anyModelWide = true;
        auto aggregate = [&](const CheckRule::Comparison& c) {
            double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
            int n = 0;
            for (const Values* v : quantized) {
                const double x = v->at(c.metric);
                if (std::isnan(x)) continue;
                sum += x, lo = std::min(lo, x), hi = std::max(hi, x), ++n;
            }
            if (n == 0) return std::nan("");
            if (c.aggregate == "min") return lo;
            if (c.aggregate == "max") return hi;
            if (c.aggregate == "sum") return sum;
            return sum / n;
        };
        std::string values;
        if (holds(rule, aggregate, values)) model.failures.push_back(rule.text() + " (" + values + ")");
    }
    if (anyModelWide) {
        model.status = model.failures.empty() ? "pass" : "fail";
        result.subjects.push_back(std::move(model));
    }
    return result;
}

std::string junitXml(const CheckResult& result, const std::vector<CheckRule>& rules) {
    std::string rulesText;
    for (const auto& r : rules)
        rulesText += (rulesText.empty() ? "" : "; ") + r.text();
    int tests = 0;
    for (const auto& s : result.subjects)
        tests += s.status != "kept";
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"quantlens "
                      "check\" tests=\"" +
                      std::to_string(tests) + "\" failures=\"" + std::to_string(result.failed()) + "\">\n";
    xml += "<properties><property name=\"rules\" value=\"" + escapeXml(rulesText) + "\"/></properties>\n";
    for (const auto& s : result.subjects) {
        if (s.status == "kept") continue;
        xml += "<testcase classname=\"" + escapeXml(result.file) + "\" name=\"" + escapeXml(s.name) + "\"";
        if (s.failures.empty()) {
            xml += "/>\n";
            continue;
        }
        std::string all; // one line per failure, each escaped on its own
        for (const auto& f : s.failures)
            all += escapeXml(f) + "\n";
        xml +=
            "><failure message=\"" + escapeXml(s.failures.front()) + "\">" + all + "</failure></testcase>\n";
    }
    return xml + "</testsuite>\n</testsuites>\n";
}

std::string checkHtml(const json& report, const CheckResult& result, const std::vector<CheckRule>& rules) {
    std::string html =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>QuantLens check</title><style>"
        "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:2px "
        "6px;text-align:right}td:first-child,th:first-child{text-align:left}tr.fail{background:#fde7e9}"
        "tr.kept{color:#777}.hist rect{fill:#2a6fb0}h2{margin-top:1.5em}</style></head><body>\n";
    html += "<h1>QuantLens check: " + std::string(result.failed() ? "FAILED" : "passed") +
            "</h1>\n<p>Model: " + escapeXml(result.file) + ". " + std::to_string(result.failed()) + " of " +
            std::to_string(result.subjects.size()) +
            " checked failed.</p>\n<p>Rules (each says when to fail):</p><ul>";
    for (const auto& r : rules)
        html += "<li><code>" + escapeXml(r.text()) + "</code></li>";
    html +=
        "</ul>\n<table><tr><th>tensor</th><th>SQNR dB</th><th>max |err|</th><th>cosine</th><th>clipped %</th>"
        "<th>result</th></tr>\n";
    for (const auto& s : result.subjects) {
        const json* entry = s.entry >= 0 ? &report["tensors"][static_cast<std::size_t>(s.entry)] : nullptr;
        std::string cells;
        if (entry && entry->contains("stats")) {
            const json& st = (*entry)["stats"];
            cells = "<td>" + number(reportStat(st, "sqnr_db")) + "</td><td>" +
                    number(reportStat(st, "max_abs_error")) + "</td><td>" + number(reportStat(st, "cosine")) +
                    "</td><td>" + number(100 * reportStat(st, "clipped_fraction")) + "</td>";
        } else {
            cells = "<td></td><td></td><td></td><td></td>";
        }
        std::string what = s.status;
        for (const auto& f : s.failures)
            what += "<br>" + escapeXml(f);
        html += "<tr class=\"" + s.status + "\"><td>" + escapeXml(s.name) + "</td>" + cells + "<td>" + what +
                "</td></tr>\n";
    }
    html += "</table>\n";
    for (const auto& s : result.subjects) {
        if (s.status != "fail" || s.entry < 0) continue;
        const json& t = report["tensors"][static_cast<std::size_t>(s.entry)];
        if (!t.contains("histograms") || !t["histograms"].is_object()) continue;
        const std::string svg = histogramSvg(t["histograms"].value("error", json()));
        if (svg.empty()) continue;
        html += "<h2>" + escapeXml(s.name) + "</h2><p>Error x &minus; x&#770; (log-scaled counts)</p>" + svg +
                "\n";
    }
    return html + "</body></html>\n";
}

} // namespace ql
