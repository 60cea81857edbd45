// What `evaluate` costs against one plain inference of the same model, measured in the same run with
// the same session settings (one thread, no graph optimization): the plain model; the model with
// every node output added as a graph output (the per-layer run, float or quantized side); and the
// count of runs a whole evaluation makes (plain, per-layer float, per-layer quantized, one local run
// per weighted node). ONNX Runtime is found as evaluate finds it ($QUANTLENS_ONNXRUNTIME, ...).
//
//   bench_evaluate MODEL.onnx [NAME=N ...]   dynamic input dimensions by name (a dynamic first one is 1)
#include "bench_limit.h"
#include "io/tensor_source.h"
#include "runtime/model_rewrite.h"
#include "runtime/ort_abi.h"
#include "runtime/ort_runtime.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>

using namespace ql;

namespace {

std::vector<HostTensor> randomInputs(const OrtModel& model, const std::map<std::string, std::int64_t>& dims) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    std::vector<HostTensor> inputs;
    for (const TensorDecl& d : model.inputs()) {
        if (d.type != ort::kFloat) throw std::runtime_error("input '" + d.name + "' is not float32");
        Shape shape;
        for (std::size_t i = 0; i < d.dims.size(); ++i) {
            if (d.dims[i] >= 0) {
                shape.push_back(d.dims[i]);
            } else if (const auto it = dims.find(d.dimNames[i]); it != dims.end()) {
                shape.push_back(it->second);
            } else if (i == 0) {
                shape.push_back(1);
            } else {
                throw std::runtime_error("input '" + d.name + "': give dimension '" + d.dimNames[i] +
                                         "' as NAME=N");
            }
        }
        HostTensor t{d.name, d.type, shape, {}};
        t.bytes.resize(static_cast<std::size_t>(elementCount(shape)) * 4);
        for (std::size_t k = 0; k < t.bytes.size(); k += 4) {
            const float v = normal(rng);
            std::memcpy(t.bytes.data() + k, &v, 4);
        }
        inputs.push_back(std::move(t));
    }
    return inputs;
}

// Best of `repeats` wall-clock times of fn, in milliseconds.
template <class Fn> double bestMs(int repeats, Fn&& fn) {
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        best = std::min(
            best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_evaluate MODEL.onnx [NAME=N ...]\n");
        return 2;
    }
    try {
        std::map<std::string, std::int64_t> dims;
        for (int i = 2; i < argc; ++i) {
            const std::string a = argv[i];
            const auto eq = a.find('=');
            if (eq == std::string::npos) throw std::runtime_error(a + ": write NAME=N");
            dims[a.substr(0, eq)] = std::stoll(a.substr(eq + 1));
        }
        const auto rt = OrtRuntime::find();
        const ModelRewriter model(argv[1]);
        const auto plain = rt->open(model.original(), argv[1]);
        const auto inputs = randomInputs(*plain, dims);
        std::set<std::string> seen(model.graphOutputs().begin(), model.graphOutputs().end());
        std::vector<std::string> extras;
        std::size_t weighted = 0;
        // The weights evaluate quantizes: float32, rank 2 or more.
        const auto source = openTensorSource(argv[1]);
        std::set<std::string> weights;
        for (const auto& w : model.weights())
            if (const TensorInfo* info = source->find(w); info && info->shape.size() >= 2) weights.insert(w);
        for (const ModelNode& n : model.nodes()) {
            if (n.opType == "Constant") continue;
            for (const auto& o : n.outputs)
                if (seen.insert(o).second) extras.push_back(o);
            weighted += std::any_of(n.inputs.begin(), n.inputs.end(),
                                    [&](const std::string& in) { return weights.count(in) > 0; });
        }
        const auto layers =
            rt->open(model.rewrite({}, extras), std::string(argv[1]) + " (every node output)");
        const int repeats = 7;
        (void)plain->run(inputs, model.graphOutputs()); // warm-up
        (void)layers->run(inputs, extras);
        const double plainMs = bestMs(repeats, [&] { (void)plain->run(inputs, model.graphOutputs()); });
        const double layersMs = bestMs(repeats, [&] { (void)layers->run(inputs, extras); });
        const double openMs = bestMs(3, [&] { (void)rt->open(model.original(), argv[1]); });
        // One sample of a whole evaluation: plain + per-layer float + per-layer quantized + a local
        // run per weighted node (each on the model with every node output), and a session per model.
        const double evaluateMs = plainMs + 2 * layersMs + static_cast<double>(weighted) * layersMs;
        std::printf("model: %s (%zu nodes, %zu node outputs, %zu weighted nodes), ONNX Runtime %s\n", argv[1],
                    model.nodes().size(), extras.size(), weighted, rt->version().c_str());
        std::printf("plain inference          %10.3f ms   1.00x\n", plainMs);
        std::printf("per-layer run            %10.3f ms  %5.2fx  (every node output copied out)\n", layersMs,
                    layersMs / plainMs);
        std::printf(
            "session open             %10.3f ms  %5.2fx  (once per model: 3 + one per weighted node)\n",
            openMs, openMs / plainMs);
        std::printf(
            "evaluate, one sample     %10.3f ms  %5.2fx  (from the above: plain + 2 per-layer + %zu local)\n",
            evaluateMs, evaluateMs / plainMs, weighted);
        std::printf("evaluate --no-local      %10.3f ms  %5.2fx\n", plainMs + 2 * layersMs,
                    (plainMs + 2 * layersMs) / plainMs);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_evaluate: %s\n", e.what());
        return 1;
    }
    return 0;
}
