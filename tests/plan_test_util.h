#pragma once
// A small llama-style checkpoint (one decoder layer, bf16, HF names) and activation samples for
// it in QuantLens's safetensors statistics form: the planner's and the importance suites' model.
#include "io/safetensors_writer.h"
#include "tensor/float_formats.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace qltest {

struct PlanModule {
    const char* name;
    ql::Shape shape;
    double outliers; // share of elements drawn 8x wider: the formats differ most on these
};
inline const std::vector<PlanModule>& planModules() {
    static const std::vector<PlanModule> modules = {
        {"model.layers.0.self_attn.q_proj", {64, 256}, 0.0},
        {"model.layers.0.self_attn.k_proj", {32, 256}, 0.02},
        {"model.layers.0.self_attn.v_proj", {32, 256}, 0.0},
        {"model.layers.0.self_attn.o_proj", {256, 64}, 0.01},
        {"model.layers.0.mlp.gate_proj", {96, 256}, 0.0},
        {"model.layers.0.mlp.up_proj", {96, 256}, 0.005},
        {"model.layers.0.mlp.down_proj", {256, 96}, 0.03}, // 96 columns: no group of 64 or 128 fits
    };
    return modules;
}

struct PlanFixture {
    std::string model;                       // model.safetensors: the modules' weights and a 1-D norm
    std::string stats;                       // stats.safetensors: <module>.inputs [48, in] per module
    std::vector<std::vector<double>> sqMean; // per module, the samples' mean squares in double
};

inline ql::Tensor bf16Tensor(const ql::Shape& shape, const std::vector<float>& v) {
    ql::Tensor t(ql::DType::BF16, shape);
    auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
    for (std::size_t i = 0; i < v.size(); ++i)
        p[i] = ql::floatToBf16(v[i]);
    return t;
}

inline PlanFixture writePlanFixture(const std::string& dir) {
    PlanFixture f{dir + "/model.safetensors", dir + "/stats.safetensors", {}};
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<ql::NamedTensor> weights, stats;
    weights.push_back({"model.norm.weight", bf16Tensor({256}, std::vector<float>(256, 1.0f))});
    std::vector<float> embed(40 * 256);
    for (float& x : embed)
        x = normal(rng);
    weights.push_back({"model.embed_tokens.weight", bf16Tensor({40, 256}, embed)}); // never planned
    for (const PlanModule& m : planModules()) {
        std::vector<float> w(static_cast<std::size_t>(ql::elementCount(m.shape)));
        for (float& x : w)
            x = normal(rng) * (u(rng) < m.outliers ? 8.0f : 1.0f);
        weights.push_back({std::string(m.name) + ".weight", bf16Tensor(m.shape, w)});
        // Activation samples [n, in]: a few hot input channels, as real layers have.
        const std::int64_t in = m.shape[1], n = 48;
        std::vector<float> x(static_cast<std::size_t>(n * in));
        std::vector<double> sq(static_cast<std::size_t>(in), 0.0);
        for (std::int64_t r = 0; r < n; ++r)
            for (std::int64_t j = 0; j < in; ++j) {
                const float v = normal(rng) * 50.0f * (j % 37 == 0 ? 20.0f : 1.0f);
                x[static_cast<std::size_t>(r * in + j)] = v;
                sq[static_cast<std::size_t>(j)] += static_cast<double>(v) * v / n;
            }
        f.sqMean.push_back(sq);
        stats.push_back({std::string(m.name) + ".inputs", ql::Tensor::fromFloats({n, in}, x)});
    }
    ql::writeSafetensors(f.model, weights);
    ql::writeSafetensors(f.stats, stats);
    return f;
}

} // namespace qltest
