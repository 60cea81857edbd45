#pragma once
// The whole-model table: one row of headline numbers per tensor, worst first.
#include "report/report.h"

#include <cmath>
#include <string>
#include <vector>

namespace ql {

struct ModelRow {
    std::string name;
    std::string shape;
    double sqnrDb = 0;
    double weightedSqnrDb = std::nan(""); // importance-weighted, when the run had importance for it
    double maxAbsError = 0;
    double relError = 0;
    double cosine = 0;
    double clippedFraction = 0;
    std::int64_t nonFinite = 0;        // NaN/Inf inputs
    std::int64_t nonFiniteOutputs = 0; // finite inputs reconstructed as NaN/Inf
    std::int64_t codesUsed = 0;
    double totalMs = 0;
    std::string error;     // failed tensors keep their reason
    std::string kept;      // tensors passed through unquantized, and why
    std::vector<int> axes; // a quantized tensor's scale axes as run (its role's, or the ones named);
                           // none for a per-tensor scale
};

enum class ModelColumn { Name, Sqnr, WeightedSqnr, MaxAbsError, RelError, Cosine, Clipped, TotalMs };

std::vector<ModelRow> modelRows(const std::vector<TensorReport>& reports);
/// The same rows from a JSON report's "tensors" list (a report written earlier, or merged from
/// shards). Null numbers read back as what they stood for: an exact tensor's SQNR is +inf.
/// Throws FileError naming `file` when an entry is not a report entry.
std::vector<ModelRow> modelRows(const nlohmann::json& tensors, const std::string& file);
/// One number of a report entry's "stats", null read back as what it stood for: an exact tensor's
/// SQNR is +inf, a zero signal's -inf, and what cannot be measured NaN. Throws FileError when the
/// value is not a number.
double reportStat(const nlohmann::json& stats, const std::string& key);
/// Worst first: failed tensors, then ascending SQNR (−Inf first, +Inf — exact — last), ties by
/// name; rows with no SQNR (empty tensors) at the end. With importance, by the weighted SQNR: what
/// the layer's output loses ranks the tensors.
void sortWorstFirst(std::vector<ModelRow>& rows);
/// Sort by any column; `worstFirst` puts the bad end first (low SQNR/cosine, high errors).
void sortRows(std::vector<ModelRow>& rows, ModelColumn column, bool worstFirst = true);
/// What a tensor's figures leave out, in words ("3 values NaN/Inf in the file and 7 values
/// reconstructed as NaN/Inf, left out of the figures"); empty when both counts are 0.
std::string nonFiniteNote(std::int64_t inFile, std::int64_t reconstructed);
/// A number for a terminal table: printf `fmt`, "-" for NaN, "inf" / "-inf".
std::string tableNumber(double v, const char* fmt);
/// Whether any row has an importance-weighted figure.
bool anyWeighted(const std::vector<ModelRow>& rows);
/// Fixed-width text table for a terminal (a weighted SQNR column when any row has one).
std::string formatModelTable(const std::vector<ModelRow>& rows);

} // namespace ql
