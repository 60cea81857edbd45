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

namespace {

// Paddle names a layer's parameters "<layer>.w_<n>" (weight) and "<layer>.b_<n>" (bias): its
// statistics are the layer's, "<layer>.input_sq_mean", keyed "<layer>.weight". Empty otherwise.
std::string paddleWeightKey(const std::string& name) {
    const std::size_t dot = name.rfind(".w_");
    if (dot == std::string::npos || dot == 0 || dot + 3 == name.size()) return {};
    for (std::size_t i = dot + 3; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return {};
    return name.substr(0, dot) + ".weight";
}

} // namespace

std::optional<Importance::Weights> Importance::forTensor(const TensorInfo& info, const RoleAxes& role,
                                                         std::string& why) const {
    // The weight's own name; its llama.cpp name (an imatrix made on the GGUF of this checkpoint);
    // for a GGUF, the Hugging Face name whose llama.cpp name it is; a Paddle "X.w_0" as X's; and
    // "<name>.weight", statistics written under the weight's whole name as its module (an ONNX
    // initializer such as "onnx::Conv_12" names no module).
    const auto find = [&](const std::string& key) {
        return key.empty() ? m_file.entries.end() : m_file.entries.find(key);
    };
    auto found = find(info.name);
    if (found == m_file.entries.end()) found = find(ggufNameOf(info.name));
    if (found == m_file.entries.end())
        if (const auto hf = m_byGgufName.find(info.name); hf != m_byGgufName.end()) found = find(hf->second);
    if (found == m_file.entries.end()) found = find(paddleWeightKey(info.name));
    if (found == m_file.entries.end()) found = find(info.name + ".weight");
    if (found == m_file.entries.end()) {
        why = "the importance file has no entry for it";
        return std::nullopt;
    }
    const ImportanceEntry& e = found->second;
    const int rank = static_cast<int>(info.shape.size());
    // A depthwise conv's filter o reads input channel o alone: its axis 1 has one element.
    const int axis = role.role == WeightRole::DepthwiseConv ? 0 : role.reductionAxis;
    const std::int64_t channels = axis < rank ? info.shape[static_cast<std::size_t>(axis)] : 0;
    std::int64_t inner = 1;
    for (int d = axis + 1; d < rank; ++d)
        inner *= info.shape[static_cast<std::size_t>(d)];
    const auto values = static_cast<std::int64_t>(e.sqMean.size());
    // The legacy imatrix keeps an expert weight's vectors as one: experts x channels values.
    const bool lastAxis = axis == rank - 1;
    const int matrices = e.matrices == 1 && rank == 3 && lastAxis && values == info.shape[0] * channels
                             ? static_cast<int>(info.shape[0])
                             : e.matrices;
    const bool fits = channels > 0 && matrices > 0 && values == channels * matrices &&
                      (matrices == 1 || (rank == 3 && axis > 0 && info.shape[0] == matrices));
    if (!fits) {
        why = "importance entry '" + printable(found->first) + "' has " + std::to_string(values) +
              " values in " + std::to_string(e.matrices) + " matrices; the weight " + toString(info.shape) +
              " (" + std::string(nameOf(role.role)) + " " + std::string(layoutOf(role.role)) + ") has " +
              std::to_string(channels) + " input channels on axis " + std::to_string(axis);
        return std::nullopt;
    }
    // No weight at all: the layer's output would not see the error, and 0/0 is no SQNR (it read inf).
    if (std::all_of(e.sqMean.begin(), e.sqMean.end(), [](float s) { return s == 0.0f; })) {
        why = "importance entry '" + printable(found->first) + "' is zero on every input channel";
        return std::nullopt;
    }
    return Weights{e.sqMean, channels, matrices, inner, m_file.path + ": " + found->first};
}

WeightedError weightedErrorOf(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                              std::span<const float> x, const Importance::Weights& weights) {
    const std::vector<float> xhat = dequantizeReference(plan, params, codes);
    WeightedError w =
        weightedError(x, xhat, weights.sqMean, weights.channels, weights.matrices, weights.inner);
    w.importance = weights.origin;
    return w;
}

} // namespace ql
