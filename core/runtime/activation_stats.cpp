#include "runtime/activation_stats.h"

#include "base/error.h"
#include "io/printable.h"
#include "io/safetensors_writer.h"
#include "job/job.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace ql {
namespace {

// The data input a weight's consumer reads along the weight's input channels: the input's index
// and the channel axis in it (negative: from the end). Empty `why` when there is one.
struct DataInput {
    std::size_t index = 0;
    int axis = 1;
    std::string why;
};

DataInput dataInputOf(const ModelNode& node, std::size_t k) {
    const std::string& op = node.opType;
    const auto attr = [&](const char* name) {
        const auto it = node.ints.find(name);
        return it != node.ints.end() && it->second != 0;
    };
    if ((op == "Conv" || op == "ConvTranspose") && k == 1) return {0, 1, {}};
    if (op == "MatMul" && k == 1) return {0, -1, {}};
    if (op == "MatMul" && k == 0) return {1, -2, {}};
    // Gemm: A [M, K] (transA: [K, M]) times B [K, N] (transB: [N, K]).
    if (op == "Gemm" && k == 1) return {0, attr("transA") ? -2 : -1, {}};
    if (op == "Gemm" && k == 0) return {1, attr("transB") ? -1 : -2, {}};
    if ((op == "GRU" || op == "LSTM" || op == "RNN") && k == 1) return {0, -1, {}};
    if ((op == "GRU" || op == "LSTM" || op == "RNN") && k == 2)
        return {0, 0, "a recurrent weight of the hidden state, which the graph does not expose"};
    return {0, 0,
            "its first consumer (" + op + " input " + std::to_string(k) +
                ") reads no data along the weight's input channels"};
}

} // namespace

ActivationCollector::ActivationCollector(const ModelRewriter& model, const TensorSource& source,
                                         const std::vector<std::string>& weights) {
    const std::set<std::string> constants(model.weights().begin(), model.weights().end());
    for (const std::string& w : weights) {
        const TensorInfo* info = source.find(w);
        if (!info || info->shape.size() < 2) continue;
        const ModelNode* consumer = nullptr;
        std::size_t k = 0;
        for (const ModelNode& n : model.nodes()) {
            const auto it = std::find(n.inputs.begin(), n.inputs.end(), w);
            if (it == n.inputs.end()) continue;
            consumer = &n;
            k = static_cast<std::size_t>(it - n.inputs.begin());
            break;
        }
        if (!consumer) {
            m_skipped.emplace_back(w, "no node of the main graph reads it");
            continue;
        }
        const DataInput d = dataInputOf(*consumer, k);
        if (!d.why.empty()) {
            m_skipped.emplace_back(w, d.why);
            continue;
        }
        const std::string input = d.index < consumer->inputs.size() ? consumer->inputs[d.index] : "";
        if (input.empty() || constants.count(input)) {
            m_skipped.emplace_back(w, "its consumer's other input is " +
                                          (input.empty() ? std::string("missing") : "a constant"));
            continue;
        }
        const RoleAxes role = roleOf(source, *info);
        Tap t;
        t.weight = w;
        t.input = input;
        t.axis = d.axis;
        t.depthwise = role.role == WeightRole::DepthwiseConv; // its entry runs along the filters
        const int entryAxis = t.depthwise ? 0 : role.reductionAxis;
        t.channels = entryAxis < static_cast<int>(info->shape.size())
                         ? info->shape[static_cast<std::size_t>(entryAxis)]
                         : 0;
        if (t.channels < 1) {
            m_skipped.emplace_back(w, "its role (" + describe(role) + ") has no input channels");
            continue;
        }
        m_taps.push_back(std::move(t));
    }
}

std::vector<std::string> ActivationCollector::inputs() const {
    std::vector<std::string> names;
    for (const Tap& t : m_taps)
        if (std::find(names.begin(), names.end(), t.input) == names.end()) names.push_back(t.input);
    return names;
}

void ActivationCollector::add(const std::function<const HostTensor*(const std::string&)>& find) {
    std::vector<Tap> kept;
    for (Tap& t : m_taps) {
        const HostTensor* x = find(t.input);
        const auto skip = [&](const std::string& why) {
            m_skipped.emplace_back(t.weight, "its consumer's input '" + printable(t.input) + "' " + why);
        };
        if (!x) {
            skip("was not produced by the run");
            continue;
        }
        if (!ortIsFloat(x->type)) {
            skip("is " + ortTypeName(x->type) + ", not floating point");
            continue;
        }
        const int rank = static_cast<int>(x->shape.size());
        const int axis = t.axis < 0 ? rank + t.axis : t.axis;
        if (axis < 0 || axis >= rank) {
            skip("has shape " + toString(x->shape) + ", no input-channel axis");
            continue;
        }
        const std::int64_t channels = x->shape[static_cast<std::size_t>(axis)];
        const bool fits = t.depthwise ? channels > 0 && t.channels % channels == 0 : channels == t.channels;
        if (!fits || (!t.sum.empty() && t.sum.size() != static_cast<std::size_t>(channels))) {
            skip("has " + std::to_string(channels) + " channels on axis " + std::to_string(axis) +
                 "; the weight has " + std::to_string(t.channels) +
                 (t.depthwise ? " filters" : " input channels") +
                 " (a grouped conv's filters each read their group's channels, which one value per "
                 "weight channel cannot hold)");
            continue;
        }
        std::int64_t outer = 1, inner = 1;
        for (int d = 0; d < axis; ++d)
            outer *= x->shape[static_cast<std::size_t>(d)];
        for (int d = axis + 1; d < rank; ++d)
            inner *= x->shape[static_cast<std::size_t>(d)];
        t.sum.resize(static_cast<std::size_t>(channels), 0.0);
        const std::vector<double> v = x->toDoubles();
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t c = 0; c < channels; ++c) {
                const double* p = v.data() + (o * channels + c) * inner;
                double s = 0;
                for (std::int64_t i = 0; i < inner; ++i)
                    s += p[i] * p[i];
                t.sum[static_cast<std::size_t>(c)] += s;
            }
        t.positions += outer * inner;
        kept.push_back(std::move(t));
    }
    m_taps = std::move(kept);
}

std::vector<ActivationStat> ActivationCollector::stats() const {
    std::vector<ActivationStat> out;
    for (const Tap& t : m_taps) {
        if (t.positions == 0) continue;
        ActivationStat s{t.weight, t.input, std::vector<float>(static_cast<std::size_t>(t.channels)),
                         t.positions};
        const std::int64_t per = t.channels / static_cast<std::int64_t>(t.sum.size()); // depthwise: filters
        for (std::int64_t j = 0; j < t.channels; ++j)
            s.sqMean[static_cast<std::size_t>(j)] = static_cast<float>(
                t.sum[static_cast<std::size_t>(j / per)] / static_cast<double>(t.positions));
        out.push_back(std::move(s));
    }
    return out;
}

void writeActivationStats(const std::string& path, const std::vector<ActivationStat>& stats,
                          const std::string& dataset, int samples, const std::string& model) {
    if (stats.empty()) throw QuantError(model + ": no weight's input was measured, nothing to write");
    std::vector<NamedTensor> tensors;
    for (const ActivationStat& s : stats) {
        Tensor t(DType::F32, {static_cast<std::int64_t>(s.sqMean.size())});
        std::memcpy(t.mutableData(), s.sqMean.data(), s.sqMean.size() * sizeof(float));
        // "<module>.weight" as its module, the form PyTorch-made statistics take; any other name whole.
        const bool module = s.weight.size() > 7 && s.weight.ends_with(".weight");
        tensors.push_back(
            {(module ? s.weight.substr(0, s.weight.size() - 7) : s.weight) + ".input_sq_mean", std::move(t)});
    }
    writeSafetensors(path, tensors,
                     {{"quantlens", "input_sq_mean of each weight's consumer, from evaluate on " + model},
                      {"dataset", dataset},
                      {"chunks", std::to_string(samples)}},
                     model);
}

} // namespace ql
