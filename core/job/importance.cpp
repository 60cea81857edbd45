#include "job/importance.h"

#include "base/error.h"
#include "io/printable.h"
#include "job/tensor_diff.h"
#include "quant/reference.h"

#include <algorithm>

namespace ql {

Importance::Importance(ImportanceFile file)
    : m_file(std::move(file)) {
    for (const auto& [name, entry] : m_file.entries)
        if (const std::string g = ggufNameOf(name); !g.empty()) m_byGgufName.emplace(g, name);
}

std::shared_ptr<const Importance> Importance::open(const std::string& path) {
    return std::make_shared<const Importance>(readImportanceFile(path));
}

std::optional<Importance::Weights> Importance::forTensor(const TensorInfo& info, std::string& why) const {
    // The weight's own name; its llama.cpp name (an imatrix made on the GGUF of this checkpoint);
    // or, for a GGUF, the Hugging Face name whose llama.cpp name it is.
    const std::string gguf = ggufNameOf(info.name);
    auto found = m_file.entries.find(info.name);
    if (found == m_file.entries.end() && !gguf.empty()) found = m_file.entries.find(gguf);
    if (found == m_file.entries.end())
        if (const auto hf = m_byGgufName.find(info.name); hf != m_byGgufName.end())
            found = m_file.entries.find(hf->second);
    if (found == m_file.entries.end()) {
        why = "the importance file has no entry for it";
        return std::nullopt;
    }
    const ImportanceEntry& e = found->second;
    const std::int64_t channels = info.shape.empty() ? 0 : info.shape.back();
    const auto values = static_cast<std::int64_t>(e.sqMean.size());
    // The legacy imatrix keeps an expert weight's vectors as one: experts x channels values.
    const int matrices = e.matrices == 1 && info.shape.size() == 3 && values == info.shape[0] * channels
                             ? static_cast<int>(info.shape[0])
                             : e.matrices;
    const bool fits = channels > 0 && matrices > 0 && values == channels * matrices &&
                      (matrices == 1 || (info.shape.size() == 3 && info.shape[0] == matrices));
    if (!fits) {
        why = "importance entry '" + printable(found->first) + "' has " + std::to_string(values) +
              " values in " + std::to_string(e.matrices) + " matrices; the weight " + toString(info.shape) +
              " has " + std::to_string(channels) + " input channels";
        return std::nullopt;
    }
    // No weight at all: the layer's output would not see the error, and 0/0 is no SQNR (it read inf).
    if (std::all_of(e.sqMean.begin(), e.sqMean.end(), [](float s) { return s == 0.0f; })) {
        why = "importance entry '" + printable(found->first) + "' is zero on every input channel";
        return std::nullopt;
    }
    return Weights{e.sqMean, channels, matrices, m_file.path + ": " + found->first};
}

WeightedError weightedErrorOf(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                              std::span<const float> x, const Importance::Weights& weights) {
    const std::vector<float> xhat = dequantizeReference(plan, params, codes);
    WeightedError w = weightedError(x, xhat, weights.sqMean, weights.channels, weights.matrices);
    w.importance = weights.origin;
    return w;
}

} // namespace ql
