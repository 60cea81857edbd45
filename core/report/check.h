#pragma once
// A gate for CI over any report: rules that say when a tensor (or the model) fails, evaluated on
// the report's numbers, with the failures listed and written as JUnit XML and a self-contained HTML
// page a CI system shows as is.
//
// A rule describes a failure:
//   sqnr < 30                                 per tensor
//   cosine < 0.99 and max_abs > 0.001         (Ascend's accuracy tools' rule)
//   mismatched_codes > 0                      per comparison (compare --report)
//   min(sqnr) < 35   mean(cosine) < 0.999     model-wide: min, max, mean or sum over the quantized tensors
// Comparisons are <, <=, >, >=, ==, !=; clauses join with `and`, then `or` (and binds tighter).
// A metric that is undefined for a tensor (an empty tensor's SQNR) satisfies no comparison; an
// exact reconstruction's SQNR is +inf. A tensor that failed to quantize always fails the check.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ql {

struct TensorReport;

class CheckRule {
public:
    /// Throws QuantError saying where the text stops making sense and which metrics exist.
    static CheckRule parse(const std::string& text);
    const std::string& text() const { return m_text; }
    /// Aggregates (min/max/mean/sum) make a rule model-wide.
    bool modelWide() const { return m_modelWide; }

    struct Comparison {
        std::string aggregate; // empty, or min / max / mean / sum
        std::string metric;    // the canonical name (metricNames())
        std::string op;
        double value = 0;
    };
    /// Or of ands.
    const std::vector<std::vector<Comparison>>& clauses() const { return m_clauses; }

private:
    std::string m_text;
    bool m_modelWide = false;
    std::vector<std::vector<Comparison>> m_clauses;
};

/// Rules from a file: one per line; blank lines and text after '#' are ignored. Throws FileError
/// naming the file and line.
std::vector<CheckRule> readRules(const std::string& path);

/// Every metric a rule can name, with its aliases ("sqnr_db (sqnr)").
std::vector<std::string> metricNames();

struct CheckSubject {
    std::string name;                  // a tensor, "<tensor>: A vs B" for a comparison, or "model"
    std::string status;                // "pass", "fail", "kept" (passed through: not checked)
    std::vector<std::string> failures; // each broken rule with the values it saw
    int entry = -1;                    // its place in the report's "tensors", when it is a tensor
};

struct CheckResult {
    std::string file; // the model the report is of
    std::vector<CheckSubject> subjects;
    int failed() const;
};

/// A report as the rules read it, typed once: from a report's JSON (a file, a diff, Python's dict) or
/// straight from a run's results (the app's table).
struct CheckEntry {
    std::string name;
    bool passedThrough = false; // kept as it was: not checked
    bool failed = false;        // not measured: fails whatever the rules
    std::string error;          // why, when failed
    /// Every per-tensor metric rules name (metricNames()) by its canonical name, NaN where undefined;
    /// a diff's adds "non_finite_count_b" when it has NaN/Inf on one side only.
    std::map<std::string, double> values;
};
struct CheckComparison {
    std::string a = "A", b = "B";         // the two sides' labels
    std::map<std::string, double> values; // the comparison's metrics
};
struct CheckReport {
    std::string file; // the model the report is of
    std::vector<CheckEntry> tensors;
    std::optional<CheckComparison> comparison; // a compare report's A vs B
};

/// Reads a report ({"file", "tensors", "comparison"?}). Throws FileError when it is not one (or lists
/// no tensor), nlohmann::json::exception for a field of the wrong kind.
CheckReport checkReportOf(const nlohmann::json& report);
/// A run's results as check reads them: the values the report would hold, without writing it.
CheckReport checkReportOf(const std::string& file, const std::vector<TensorReport>& tensors);

/// Evaluates `rules` on a report. Throws FileError when it lists no tensor.
CheckResult runChecks(const CheckReport& report, const std::vector<CheckRule>& rules);
/// runChecks(checkReportOf(report), rules).
CheckResult runChecks(const nlohmann::json& report, const std::vector<CheckRule>& rules);

/// JUnit XML: one test case per subject.
std::string junitXml(const CheckResult& result, const std::vector<CheckRule>& rules);
/// One HTML page, no external files: the rules, a table of every tensor's headline numbers with
/// the failures marked, and each failing tensor's error histogram drawn as inline SVG.
std::string checkHtml(const nlohmann::json& report, const CheckResult& result,
                      const std::vector<CheckRule>& rules);

} // namespace ql
