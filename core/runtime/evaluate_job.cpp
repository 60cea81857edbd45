#include "runtime/evaluate_job.h"

#include "base/error.h"
#include "io/printable.h"
#include "quant/reference.h"
#include "runtime/input_file.h"
#include "runtime/model_rewrite.h"
#include "runtime/ort_abi.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

namespace ql {
namespace {

// Σ over every compared element, in double.
struct Accum {
    double ref2 = 0, err2 = 0, dot = 0, q2 = 0, maxAbs = 0;
    std::int64_t count = 0, nonFinite = 0;
    void add(const std::vector<double>& ref, const std::vector<double>& q) {
        for (std::size_t i = 0; i < ref.size() && i < q.size(); ++i) {
            if (!std::isfinite(ref[i]) || !std::isfinite(q[i])) {
                ++nonFinite;
                continue;
            }
            const double d = ref[i] - q[i];
            ref2 += ref[i] * ref[i];
            err2 += d * d;
            dot += ref[i] * q[i];
            q2 += q[i] * q[i];
            maxAbs = std::max(maxAbs, std::abs(d));
            ++count;
        }
    }
    ErrorMetrics metrics() const {
        ErrorMetrics m;
        m.count = count;
        m.nonFinite = nonFinite;
        m.maxAbs = maxAbs;
        m.sqnrDb = err2 == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(ref2 / err2);
        m.cosine = ref2 > 0 && q2 > 0 ? dot / std::sqrt(ref2 * q2) : (ref2 == q2 ? 1.0 : 0.0);
        return m;
    }
};

struct ClassAccum {
    std::int64_t rows = 0, top1 = 0, top5 = 0;
    double kl = 0;
    int softmax = -1; // decided on the first sample: -1 not yet, 1 logits, 0 probabilities
    void add(const std::vector<double>& f, const std::vector<double>& q, std::int64_t classes) {
        const auto n = static_cast<std::int64_t>(f.size()) / classes;
        if (softmax < 0) {
            bool probabilities = true;
            for (std::int64_t r = 0; r < n && probabilities; ++r) {
                double sum = 0;
                for (std::int64_t c = 0; c < classes; ++c) {
                    const double v = f[static_cast<std::size_t>(r * classes + c)];
                    probabilities = probabilities && v >= 0;
                    sum += v;
                }
                probabilities = probabilities && std::abs(sum - 1) <= 1e-3;
            }
            softmax = probabilities ? 0 : 1;
        }
        std::vector<double> pf(static_cast<std::size_t>(classes)), pq(pf.size());
        std::vector<std::int64_t> order(pf.size());
        for (std::int64_t r = 0; r < n; ++r) {
            const double* a = f.data() + r * classes;
            const double* b = q.data() + r * classes;
            const auto fTop = std::max_element(a, a + classes) - a;
            const auto qTop = std::max_element(b, b + classes) - b;
            top1 += fTop == qTop;
            if (classes >= 5) {
                for (std::int64_t c = 0; c < classes; ++c)
                    order[static_cast<std::size_t>(c)] = c;
                std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                                  [&](std::int64_t x, std::int64_t y) { return b[x] > b[y]; });
                top5 += std::find(order.begin(), order.begin() + 5, fTop) != order.begin() + 5;
            }
            auto probs = [&](const double* v, std::vector<double>& p) {
                if (!softmax) {
                    std::copy(v, v + classes, p.begin());
                    return;
                }
                const double m = *std::max_element(v, v + classes);
                double sum = 0;
                for (std::int64_t c = 0; c < classes; ++c)
                    sum += p[static_cast<std::size_t>(c)] = std::exp(v[c] - m);
                for (auto& x : p)
                    x /= sum;
            };
            probs(a, pf);
            probs(b, pq);
            double k = 0;
            for (std::size_t c = 0; c < pf.size(); ++c)
                if (pf[c] > 0) k += pf[c] * std::log(pf[c] / std::max(pq[c], 1e-30));
            kl += k;
            ++rows;
        }
    }
};

bool isClassScores(const Shape& shape, std::int32_t type) {
    return ortIsFloat(type) && (shape.size() == 2 || shape.size() == 3) && shape.back() >= 2;
}

std::string declText(const TensorDecl& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.dims.size(); ++i) {
        if (i) s += ",";
        s += d.dims[i] >= 0 ? std::to_string(d.dims[i]) : (d.dimNames[i].empty() ? "?" : d.dimNames[i]);
    }
    return ortTypeName(d.type) + " " + s + "]";
}

// Checks one sample's input against the model's declaration.
void checkInput(const HostTensor& t, const TensorDecl& d, const std::string& where) {
    bool fits = t.type == d.type && t.shape.size() == d.dims.size();
    for (std::size_t i = 0; fits && i < d.dims.size(); ++i)
        fits = d.dims[i] < 0 || d.dims[i] == t.shape[i];
    if (!fits)
        throw QuantError(where + ": input '" + printable(d.name) + "' is " + ortTypeName(t.type) + " " +
                         toString(t.shape) + " per sample; the model takes " + declText(d));
}

// Samples cut from a file's tensors along their first axis.
std::vector<std::vector<HostTensor>>
samplesFromFile(const std::string& path, const std::vector<TensorDecl>& decls, EvaluateOutcome& outcome) {
    std::vector<HostTensor> all = readInputFile(path);
    std::int64_t count = -1;
    std::vector<std::vector<HostTensor>> samples;
    for (const HostTensor& t : all)
        if (std::none_of(decls.begin(), decls.end(), [&](const TensorDecl& d) { return d.name == t.name; }))
            throw QuantError(path + ": '" + printable(t.name) + "' is not an input of the model");
    for (const TensorDecl& d : decls) {
        const auto it =
            std::find_if(all.begin(), all.end(), [&](const HostTensor& t) { return t.name == d.name; });
        if (it == all.end())
            throw QuantError(path + ": holds no '" + printable(d.name) + "', an input of the model (" +
                             declText(d) + ")");
        const HostTensor& t = *it;
        if (t.type != d.type)
            throw QuantError(path + ": '" + printable(d.name) + "' is " + ortTypeName(t.type) +
                             "; the model takes " + declText(d));
        if (t.shape.empty())
            throw QuantError(path + ": '" + printable(d.name) + "' has no sample axis (a scalar)");
        const bool keepsAxis = t.shape.size() == d.dims.size(); // the samples run one at a time as [1, ...]
        if (!keepsAxis && t.shape.size() != d.dims.size() + 1)
            throw QuantError(path + ": '" + printable(d.name) + "' has shape " + toString(t.shape) +
                             "; the model takes " + declText(d) +
                             ", so samples × that shape, or the model's shape "
                             "with the samples as its first axis");
        if (count >= 0 && t.shape[0] != count)
            throw QuantError(path + ": the inputs hold different numbers of samples (" +
                             std::to_string(count) + " and " + std::to_string(t.shape[0]) + " in '" +
                             printable(d.name) + "')");
        count = t.shape[0];
        Shape shape = t.shape;
        if (keepsAxis)
            shape[0] = 1;
        else
            shape.erase(shape.begin());
        const std::size_t bytes = static_cast<std::size_t>(elementCount(shape)) * ortElementSize(t.type);
        samples.resize(static_cast<std::size_t>(count));
        for (std::int64_t s = 0; s < count; ++s) {
            HostTensor one{t.name, t.type, shape, {}};
            const auto* b = t.bytes.data() + static_cast<std::size_t>(s) * bytes;
            one.bytes.assign(b, b + bytes);
            checkInput(one, d, path);
            samples[static_cast<std::size_t>(s)].push_back(std::move(one));
        }
    }
    if (count <= 0) throw QuantError(path + ": no samples");
    outcome.inputNotes.push_back("from " + path);
    return samples;
}

// Samples drawn from a standard normal distribution, shaped as the model declares its inputs.
std::vector<std::vector<HostTensor>>
randomSamples(const EvaluateOptions& o, const std::vector<TensorDecl>& decls, EvaluateOutcome& outcome) {
    std::mt19937_64 rng(o.seed);
    auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; };
    std::vector<std::vector<HostTensor>> samples(static_cast<std::size_t>(o.random));
    std::set<std::string> used;
    for (const TensorDecl& d : decls) {
        if (d.type != ort::kFloat && d.type != ort::kDouble)
            throw QuantError("input '" + printable(d.name) + "' is " + ortTypeName(d.type) +
                             ": --random generates float inputs only; give its values with --inputs FILE");
        Shape shape;
        for (std::size_t i = 0; i < d.dims.size(); ++i) {
            if (d.dims[i] >= 0) {
                shape.push_back(d.dims[i]);
                continue;
            }
            const std::string& n = d.dimNames[i];
            if (const auto it = o.dims.find(n); !n.empty() && it != o.dims.end()) {
                shape.push_back(it->second);
                used.insert(n);
            } else if (i == 0) {
                shape.push_back(1); // the batch
            } else {
                throw QuantError("input '" + printable(d.name) + "' (" + declText(d) + "): dimension " +
                                 std::to_string(i) + " is dynamic; give it with --dim " +
                                 (n.empty() ? std::string("NAME") : n) + "=N");
            }
        }
        const std::size_t n = static_cast<std::size_t>(elementCount(shape));
        for (auto& sample : samples) {
            HostTensor t{d.name, d.type, shape, {}};
            t.bytes.resize(n * ortElementSize(d.type));
            for (std::size_t k = 0; k < n; ++k) {
                const double v = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
                if (d.type == ort::kFloat) {
                    const float f = static_cast<float>(v);
                    std::memcpy(t.bytes.data() + 4 * k, &f, 4);
                } else {
                    std::memcpy(t.bytes.data() + 8 * k, &v, 8);
                }
            }
            sample.push_back(std::move(t));
        }
        outcome.inputNotes.push_back("'" + d.name + "': " + ortTypeName(d.type) + " " + toString(shape));
    }
    for (const auto& [name, value] : o.dims)
        if (!used.count(name))
            throw QuantError("--dim " + name + ": no dynamic input dimension has this name");
    outcome.generated = true;
    return samples;
}

// Concatenates the samples' tensors along a new first axis.
HostTensor stack(const std::vector<HostTensor>& parts) {
    HostTensor t{parts.front().name, parts.front().type, parts.front().shape, {}};
    t.shape.insert(t.shape.begin(), static_cast<std::int64_t>(parts.size()));
    for (const auto& p : parts) {
        if (p.shape != parts.front().shape)
            throw QuantError("output '" + p.name + "' changes shape between samples: " + toString(p.shape));
        t.bytes.insert(t.bytes.end(), p.bytes.begin(), p.bytes.end());
    }
    return t;
}

// The graph's outputs, then the node outputs added for the layers.
std::vector<std::string> quantNamesOf(const std::vector<std::string>& graphOutputs,
                                      const std::vector<std::string>& extras) {
    std::vector<std::string> names = graphOutputs;
    names.insert(names.end(), extras.begin(), extras.end());
    return names;
}

// The request's spec run on the model's float32 weights of rank >= 2, each dequantized with the
// reference: what replaces them in the quantized model.
std::map<std::string, std::vector<float>> quantizedWeights(const JobRequest& request,
                                                           const ModelRewriter& model,
                                                           EvaluateOutcome& outcome,
                                                           const ProgressFn& progress) {
    const std::string& path = request.source->path();
    std::vector<std::string> names;
    for (const auto& w : model.weights())
        if (const TensorInfo* info = request.source->find(w); info && info->shape.size() >= 2)
            names.push_back(w);
    if (names.empty()) throw QuantError(path + ": no float32 weight of rank 2 or more in the main graph");
    ModelEvents events;
    events.progress = [&](double) { return reportProgress(progress, 0.0); };
    ModelOutcome run = runModelJob(request, names, {true, true}, events);
    outcome.weights = run.reports;
    std::map<std::string, std::vector<float>> dequantized;
    for (const QuantizedTensor& q : run.quantized)
        dequantized[q.name] = dequantizeReference(q.plan, q.params, q.codes);
    outcome.quantized = static_cast<int>(dequantized.size());
    if (dequantized.empty())
        throw QuantError(
            path + ": the spec quantized none of its " + std::to_string(names.size()) + " weights" +
            (run.reports.empty() || run.reports[0].error.empty() ? "" : ": " + run.reports[0].error));

    return dequantized;
}

} // namespace

std::vector<std::vector<HostTensor>>
evaluationSamples(const EvaluateOptions& o, const std::vector<TensorDecl>& decls, EvaluateOutcome& outcome) {
    if (o.inputs.empty() == (o.random <= 0))
        throw QuantError("give the inputs with exactly one of --inputs FILE or --random N");
    return o.inputs.empty() ? randomSamples(o, decls, outcome) : samplesFromFile(o.inputs, decls, outcome);
}

EvaluateOutcome runEvaluateJob(const JobRequest& request, const EvaluateOptions& o,
                               const ProgressFn& progress) {
    if (o.inputs.empty() == (o.random <= 0))
        throw QuantError("give the inputs with exactly one of --inputs FILE or --random N");
    const std::string& path = request.source->path();
    EvaluateOutcome outcome;
    const auto rt = OrtRuntime::find(); // before any work: a missing runtime is said at once
    outcome.runtime = "ONNX Runtime " + rt->version() + " (" + rt->path() + ")";
    const ModelRewriter model(path);
    const auto plain = rt->open(model.original(), path);
    auto samples = evaluationSamples(o, plain->inputs(), outcome);
    outcome.samples = static_cast<int>(samples.size());

    // The weights: float32 of rank >= 2 in the main graph, through the request's spec and backend;
    // or, against another model, none: that model holds its quantized weights itself.
    std::map<std::string, std::vector<float>> dequantized;
    std::map<std::string, const std::vector<float>*> all;
    if (o.against.empty()) {
        dequantized = quantizedWeights(request, model, outcome, progress);
        for (const auto& [name, values] : dequantized)
            all[name] = &values;
    }

    // The layers: every output of every node but the Constants.
    const std::vector<std::string>& graphOutputs = model.graphOutputs();
    std::set<std::string> seen(graphOutputs.begin(), graphOutputs.end());
    std::vector<std::string> extras;
    std::vector<std::size_t> layerNode; // node index per layer
    for (std::size_t i = 0; i < model.nodes().size(); ++i) {
        const ModelNode& n = model.nodes()[i];
        if (n.opType == "Constant") continue;
        for (const auto& out : n.outputs) {
            if (!seen.insert(out).second) continue;
            extras.push_back(out);
            layerNode.push_back(i);
        }
    }
    // Graph outputs are layers too (their node's error); listed with the rest.
    std::vector<std::string> layerNames = extras;
    for (std::size_t i = 0; i < model.nodes().size(); ++i)
        for (const auto& out : model.nodes()[i].outputs)
            if (std::find(graphOutputs.begin(), graphOutputs.end(), out) != graphOutputs.end()) {
                layerNames.push_back(out);
                layerNode.push_back(i);
            }
    std::optional<ActivationCollector> activations;
    if (o.activations) activations.emplace(model, *request.source, model.weights());
    const auto floatLayers = rt->open(model.rewrite({}, extras), path + " (every node output)");
    std::unique_ptr<OrtModel> quantModel;
    if (o.against.empty()) {
        quantModel = rt->open(model.rewrite(all, extras), path + " (quantized weights)");
    } else {
        // The same graph with its weights quantized in the file (a QDQ export): the runtime's own
        // arithmetic gives the quantized side, every node output by its name.
        const ModelRewriter other(o.against);
        std::set<std::string> outputs(other.graphOutputs().begin(), other.graphOutputs().end());
        for (const ModelNode& n : other.nodes())
            outputs.insert(n.outputs.begin(), n.outputs.end());
        for (const auto& name : quantNamesOf(graphOutputs, extras))
            if (!outputs.count(name))
                throw QuantError(
                    o.against + ": has no node output '" + printable(name) + "' of " + path +
                    "; --against takes the same model with its weights quantized (a QDQ export)");
        quantModel = rt->open(other.rewrite({}, extras), o.against);
        outcome.against = o.against;
    }

    const std::vector<std::string> quantNames = quantNamesOf(graphOutputs, extras);
    const std::size_t G = graphOutputs.size();
    std::vector<Accum> outAcc(G), layerAcc(layerNames.size());
    std::vector<ClassAccum> classAcc(G);
    std::vector<std::vector<HostTensor>> floatOut(G), quantOut(G);
    // Float values of the weighted nodes' outputs, per sample, for the local runs.
    std::vector<std::set<std::string>> nodeWeights(model.nodes().size());
    std::set<std::string> keep;
    for (std::size_t i = 0; i < model.nodes().size(); ++i)
        for (const auto& in : model.nodes()[i].inputs)
            if (all.count(in)) {
                nodeWeights[i].insert(in);
                for (const auto& out : model.nodes()[i].outputs)
                    keep.insert(out);
            }
    std::vector<std::map<std::string, std::vector<double>>> kept(samples.size());
    std::vector<bool> layerFloat(layerNames.size(), false);
    std::vector<std::int32_t> outType(G, 0);
    std::vector<Shape> outShape(G);

    std::size_t localNodes = 0;
    for (const auto& w : nodeWeights)
        localNodes += !w.empty();
    const double steps = static_cast<double>(
        samples.size() * (1 + (o.local ? localNodes : 0) + (o.sensitivity ? all.size() : 0)));
    if (o.announce)
        o.announce(
            std::to_string(static_cast<std::size_t>(steps)) + " runs of the model: " +
            std::to_string(samples.size()) + " sample" + (samples.size() == 1 ? "" : "s") + " × (1 pass" +
            (o.local ? " + " + std::to_string(localNodes) + " weighted nodes (local)" : std::string()) +
            (o.sensitivity ? " + " + std::to_string(all.size()) + " weights (sensitivity)" : std::string()) +
            ")");
    double done = 0;
    for (std::size_t s = 0; s < samples.size(); ++s) {
        const auto plainOut = plain->run(samples[s], graphOutputs);
        const auto layersOut = floatLayers->run(samples[s], extras);
        const auto quantAll = quantModel->run(samples[s], quantNames);
        for (std::size_t g = 0; g < G; ++g) {
            floatOut[g].push_back(plainOut[g]);
            quantOut[g].push_back(quantAll[g]);
            outType[g] = plainOut[g].type;
            outShape[g] = plainOut[g].shape;
            if (!ortIsFloat(plainOut[g].type)) continue;
            const auto f = plainOut[g].toDoubles(), q = quantAll[g].toDoubles();
            outAcc[g].add(f, q);
            if (isClassScores(plainOut[g].shape, plainOut[g].type))
                classAcc[g].add(f, q, plainOut[g].shape.back());
        }
        for (std::size_t l = 0; l < layerNames.size(); ++l) {
            const bool isExtra = l < extras.size();
            const HostTensor& f =
                isExtra ? layersOut[l]
                        : plainOut[static_cast<std::size_t>(
                              std::find(graphOutputs.begin(), graphOutputs.end(), layerNames[l]) -
                              graphOutputs.begin())];
            const HostTensor& q =
                isExtra ? quantAll[G + l]
                        : quantAll[static_cast<std::size_t>(
                              std::find(graphOutputs.begin(), graphOutputs.end(), layerNames[l]) -
                              graphOutputs.begin())];
            if (!ortIsFloat(f.type)) continue;
            layerFloat[l] = true;
            const auto fv = f.toDoubles();
            layerAcc[l].add(fv, q.toDoubles());
            if (o.local && keep.count(layerNames[l])) kept[s][layerNames[l]] = fv;
        }
        if (activations) // the float run's values: a graph input, a node output or a graph output
            activations->add([&](const std::string& name) -> const HostTensor* {
                for (const HostTensor& t : samples[s])
                    if (t.name == name) return &t;
                if (const auto e = std::find(extras.begin(), extras.end(), name); e != extras.end())
                    return &layersOut[static_cast<std::size_t>(e - extras.begin())];
                if (const auto g = std::find(graphOutputs.begin(), graphOutputs.end(), name);
                    g != graphOutputs.end())
                    return &plainOut[static_cast<std::size_t>(g - graphOutputs.begin())];
                return nullptr;
            });
        done += 1;
        reportProgress(progress, done / steps);
    }
    for (std::size_t g = 0; g < G; ++g) {
        OutputMetrics m;
        m.name = graphOutputs[g];
        m.type = ortTypeName(outType[g]);
        m.shape = outShape[g];
        if (ortIsFloat(outType[g])) {
            m.error = outAcc[g].metrics();
            if (classAcc[g].rows > 0) {
                const auto& c = classAcc[g];
                m.classes = true;
                m.rows = c.rows;
                m.top1 = static_cast<double>(c.top1) / static_cast<double>(c.rows);
                if (outShape[g].back() >= 5)
                    m.top5 = static_cast<double>(c.top5) / static_cast<double>(c.rows);
                m.kl = c.kl / static_cast<double>(c.rows);
                m.softmaxed = c.softmax == 1;
            }
        }
        outcome.outputs.push_back(std::move(m));
        outcome.floatOutputs.push_back(stack(floatOut[g]));
        outcome.quantizedOutputs.push_back(stack(quantOut[g]));
    }

    // Sensitivity: one model per weight, only that weight quantized, measured at the graph outputs.
    if (o.sensitivity) {
        for (const auto& w : model.weights()) {
            const auto it = all.find(w);
            if (it == all.end()) continue;
            const auto one =
                rt->open(model.rewrite({{w, it->second}}, {}), path + " (only " + w + " quantized)");
            Accum acc;
            for (std::size_t s = 0; s < samples.size(); ++s) {
                const auto got = one->run(samples[s], graphOutputs);
                for (std::size_t g = 0; g < G; ++g)
                    if (ortIsFloat(got[g].type)) acc.add(floatOut[g][s].toDoubles(), got[g].toDoubles());
                done += 1;
                reportProgress(progress, done / steps);
            }
            outcome.sensitivity.push_back({w, acc.metrics()});
        }
        std::stable_sort(outcome.sensitivity.begin(), outcome.sensitivity.end(),
                         [](const WeightSensitivity& a, const WeightSensitivity& b) {
                             return a.output.sqnrDb < b.output.sqnrDb;
                         });
    }

    // Local errors: one model per weighted node, only its weights quantized.
    std::map<std::string, Accum> localAcc;
    if (o.local)
        for (std::size_t i = 0; i < model.nodes().size(); ++i) {
            if (nodeWeights[i].empty()) continue;
            const ModelNode& n = model.nodes()[i];
            std::map<std::string, const std::vector<float>*> mine;
            for (const auto& w : nodeWeights[i])
                mine[w] = all.at(w);
            std::vector<std::string> outs;
            for (const auto& out : n.outputs)
                if (kept[0].count(out)) outs.push_back(out);
            if (outs.empty()) continue;
            const auto local = rt->open(model.rewrite(mine, extras),
                                        path + " (only the weights of " + n.opType + " " + n.name + ")");
            for (std::size_t s = 0; s < samples.size(); ++s) {
                const auto got = local->run(samples[s], outs);
                for (std::size_t k = 0; k < outs.size(); ++k)
                    localAcc[outs[k]].add(kept[s].at(outs[k]), got[k].toDoubles());
                done += 1;
                reportProgress(progress, done / steps);
            }
        }

    if (activations) {
        outcome.activations = activations->stats();
        outcome.activationsSkipped = activations->skipped();
    }
    for (std::size_t l = 0; l < layerNames.size(); ++l) {
        if (!layerFloat[l]) continue;
        const ModelNode& n = model.nodes()[layerNode[l]];
        LayerMetrics m;
        m.output = layerNames[l];
        m.node = n.name.empty() ? n.opType + "_" + std::to_string(layerNode[l]) : n.name;
        m.opType = n.opType;
        m.weights.assign(nodeWeights[layerNode[l]].begin(), nodeWeights[layerNode[l]].end());
        m.cumulative = layerAcc[l].metrics();
        if (const auto it = localAcc.find(layerNames[l]); it != localAcc.end())
            m.local = it->second.metrics();
        outcome.layers.push_back(std::move(m));
    }
    return outcome;
}

} // namespace ql
