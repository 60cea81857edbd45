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
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ql {

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

/// Evaluates `rules` on a report ({"file", "tensors", "comparison"?}). Throws FileError when the
/// report is not one.
CheckResult runChecks(const nlohmann::json& report, const std::vector<CheckRule>& rules);

/// JUnit XML: one test case per subject.
std::string junitXml(const CheckResult& result, const std::vector<CheckRule>& rules);
/// One HTML page, no external files: the rules, a table of every tensor's headline numbers with
/// the failures marked, and each failing tensor's error histogram drawn as inline SVG.
std::string checkHtml(const nlohmann::json& report, const CheckResult& result,
                      const std::vector<CheckRule>& rules);

} // namespace ql
