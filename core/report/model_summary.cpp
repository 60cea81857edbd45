#include "report/model_summary.h"

#include "base/byte_size.h"
#include "io/export_tensors.h"
#include "io/gguf_blocks.h"
#include "io/tensor_source.h"
#include "report/model_table.h"

#include <algorithm>
#include <map>
#include <optional>

namespace ql {
namespace {

std::vector<std::pair<std::string, int>> byCount(const std::map<std::string, int>& reasons) {
    std::vector<std::pair<std::string, int>> out(reasons.begin(), reasons.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& l, const auto& r) { return l.second > r.second; });
    return out;
}

std::string reasonsLine(const char* what, const std::vector<std::pair<std::string, int>>& reasons) {
    std::string line = what;
    for (std::size_t i = 0; i < reasons.size(); ++i)
        line += (i ? "; " : ", ") + std::to_string(reasons[i].second) + " tensor(s): " + reasons[i].first;
    return line + ".";
}

std::string bitsPerWeight(const StoredSize& size) {
    return tableNumber(size.bitsPerWeightBefore(), "%.2f") + " → " +
           tableNumber(size.bitsPerWeightAfter(), "%.2f") + " bits per weight";
}

std::string sizeLine(const ModelSummary& s) {
    std::string line = "Weights " + byteSizeText(static_cast<double>(s.model.bitsBefore) / 8) + " → " +
                       byteSizeText(static_cast<double>(s.model.bitsAfter) / 8);
    if (s.quantized > 0) line += "; quantized tensors " + bitsPerWeight(s.quantizedSize);
    return line + "; whole model " + bitsPerWeight(s.model) + ".";
}

// The bits a tensor takes in `source` where the file stores another type than the dtype it decodes
// to: ggml's blocks (GGUF's Q4_K). Nothing when the file stores the dtype itself, or a type unknown.
std::optional<std::int64_t> storedBits(const TensorSource* source, const std::string& name) {
    const TensorInfo* info = source ? source->find(name) : nullptr;
    if (!info || info->storedType.empty()) return std::nullopt;
    for (std::uint32_t id = 0; id < 64; ++id) {
        const std::optional<GgmlTypeTraits> t = ggmlTypeTraits(id);
        if (!t || t->name != info->storedType) continue;
        const std::int64_t blocks = (elementCount(info->shape) + t->blockElems - 1) / t->blockElems;
        return blocks * t->blockBytes * 8;
    }
    return std::nullopt;
}

} // namespace

ModelSummary summarizeModel(const std::vector<TensorReport>& reports, const TensorSource* source) {
    ModelSummary s;
    std::map<std::string, int> kept, failed;
    ErrorStats all;
    for (const TensorReport& r : reports) {
        const std::int64_t elements = elementCount(r.shape);
        const std::int64_t stored = storedBits(source, r.name).value_or(elements * bitsOf(r.dtype));
        const std::int64_t after = r.quantized() ? quantizedBits(r.plan, r.params.zeroPoints) : stored;
        const auto add = [&](StoredSize& size) {
            size.elements += elements;
            size.bitsBefore += stored;
            size.bitsAfter += after;
        };
        add(s.model);
        if (r.quantized()) add(s.quantizedSize);
        if (!r.error.empty()) {
            ++failed[r.error];
        } else if (!r.passedThrough.empty()) {
            ++kept[r.passedThrough];
        } else {
            ++s.quantized;
            s.quantizedElements += r.analysis.stats.count();
            all.merge(r.analysis.stats);
        }
    }
    s.kept = byCount(kept);
    s.failed = byCount(failed);
    if (s.quantized == 0) return s;
    s.sqnrDb = all.sqnrDb();
    std::vector<ModelRow> rows = modelRows(reports);
    sortWorstFirst(rows); // the table's own order: the worst is the row it shows first
    for (const ModelRow& row : rows)
        if (row.error.empty() && row.kept.empty()) {
            s.worst = row.name;
            s.worstSqnrDb = row.sqnrDb;
            s.worstWeightedSqnrDb = row.weightedSqnrDb;
            break;
        }
    return s;
}

std::string summaryText(const ModelSummary& s) {
    std::string text;
    if (s.quantized > 0) {
        text = "Overall SQNR " + tableNumber(s.sqnrDb, "%.2f") + " dB over " +
               std::to_string(s.quantizedElements) + " quantized values of " + std::to_string(s.quantized) +
               " tensor(s); worst tensor " + s.worst + " at " + tableNumber(s.worstSqnrDb, "%.2f") + " dB";
        if (!std::isnan(s.worstWeightedSqnrDb))
            text += " (" + tableNumber(s.worstWeightedSqnrDb, "%.2f") + " dB importance-weighted)";
        text += ".";
    } else {
        text = "No tensor quantized.";
    }
    if (s.model.elements > 0) text += "\n" + sizeLine(s);
    if (!s.kept.empty()) text += "\n" + reasonsLine("Kept unquantized", s.kept);
    if (!s.failed.empty()) text += "\n" + reasonsLine("Failed", s.failed);
    return text;
}

} // namespace ql
