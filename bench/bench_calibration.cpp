// bench_calibration: the fast calibrators (calibrateFast) on 4096x4096 f32 and 11008x4096 bf16,
// each printed as a ratio to the absmax per-channel calibration and to a streaming-read limit (the
// sum of the same array, same thread count) measured in the same run, so machine noise cancels.
//
//   bench_calibration [--threads N] [--repeat N] [--only TEXT]   (--only: rows whose name holds TEXT)
#include "quant/calibration.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace ql;

namespace {

using Clock = std::chrono::steady_clock;

// Best of `repeat` runs after a warm-up: on a shared machine noise only ever adds time.
double bestMs(int repeat, const std::function<void()>& fn) {
    const auto start = Clock::now();
    fn();                                                                              // warm-up
    if (std::chrono::duration<double>(Clock::now() - start).count() > 0.2) repeat = 1; // slow rows: once
    double best = 1e300;
    for (int r = 0; r < repeat; ++r) {
        const auto s = Clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    }
    return best;
}

// The streaming-read limit: sum every element (widened as the calibrators widen it) over `threads`.
double streamSum(const void* data, DType dtype, std::size_t n, unsigned threads) {
    std::vector<double> part(threads, 0.0);
    std::vector<std::thread> pool;
    const auto work = [&](unsigned w) {
        const std::size_t b = n * w / threads, e = n * (w + 1) / threads;
        float acc[8] = {};
        if (dtype == DType::F32) {
            const float* x = static_cast<const float*>(data);
            for (std::size_t i = b; i + 8 <= e; i += 8)
                for (int k = 0; k < 8; ++k)
                    acc[k] += x[i + k];
        } else {
            const std::uint16_t* x = static_cast<const std::uint16_t*>(data);
            for (std::size_t i = b; i + 8 <= e; i += 8)
                for (int k = 0; k < 8; ++k)
                    acc[k] += bf16ToFloat(x[i + k]);
        }
        for (float a : acc)
            part[w] += a;
    };
    for (unsigned w = 1; w < threads; ++w)
        pool.emplace_back(work, w);
    work(0);
    for (auto& t : pool)
        t.join();
    double s = 0.0;
    for (double p : part)
        s += p;
    return s;
}

QuantSpec spec(Preset p, Target t, Scheme s, std::vector<int> axes, CalibMethod m, double percentile = 99.9) {
    QuantSpec q;
    q.preset = p;
    q.target = t;
    q.scheme = s;
    q.axes = std::move(axes);
    q.calibration = {m, percentile};
    return q;
}

std::string g_only;

void runCase(const char* label, const Shape& shape, DType dtype, unsigned threads, int repeat) {
    const auto n = static_cast<std::size_t>(elementCount(shape));
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> f32;
    std::vector<std::uint16_t> bf16;
    if (dtype == DType::F32) {
        f32.resize(n);
        for (auto& v : f32)
            v = normal(rng);
    } else {
        bf16.resize(n);
        for (auto& v : bf16)
            v = floatToBf16(normal(rng));
    }
    const void* data =
        dtype == DType::F32 ? static_cast<const void*>(f32.data()) : static_cast<const void*>(bf16.data());
    volatile double sink = 0;
    const double limit = bestMs(repeat, [&] { sink = sink + streamSum(data, dtype, n, threads); });
    const auto time = [&](const QuantSpec& s) {
        const ResolvedSpec plan = resolveSpec(s, shape);
        return bestMs(repeat, [&] { sink = sink + calibrateFast(plan, data, dtype, threads).scales[0]; });
    };
    const double absmax =
        time(spec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}, CalibMethod::AbsMax));
    std::printf("\n%s, %u threads: streaming read %.2f ms (%.1f GB/s), absmax per-channel %.2f ms\n", label,
                threads, limit, static_cast<double>(n * (dtype == DType::F32 ? 4 : 2)) / limit / 1e6, absmax);
    std::printf("%-34s %9s %10s %10s\n", "calibration", "ms", "x absmax", "x stream");
    const auto row = [&](const char* name, const QuantSpec& s) {
        if (!g_only.empty() && std::string(name).find(g_only) == std::string::npos) return;
        const double ms = time(s);
        std::printf("%-34s %9.2f %10.2f %10.2f\n", name, ms, ms / absmax, ms / limit);
    };
    row("absmax per-channel int8",
        spec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}, CalibMethod::AbsMax));
    row("absmax per-tensor int8",
        spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, CalibMethod::AbsMax));
    row("percentile 99.9 per-channel",
        spec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}, CalibMethod::Percentile));
    row("percentile 99.9 per-tensor",
        spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, CalibMethod::Percentile));
    row("mse per-channel", spec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}, CalibMethod::Mse));
    row("mse per-tensor", spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, CalibMethod::Mse));
    row("entropy per-channel",
        spec(Preset::TensorRT, Target::Int8, Scheme::PerChannel, {0}, CalibMethod::Entropy));
    row("entropy per-tensor",
        spec(Preset::TensorRT, Target::Int8, Scheme::PerTensor, {}, CalibMethod::Entropy));
    row("mx fp8 (block scales)", spec(Preset::MX, Target::Fp8E4M3, Scheme::Block, {}, CalibMethod::AbsMax));
    row("nvfp4 (block scales)", spec(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {}, CalibMethod::AbsMax));
    row("mx fp4 mse (code search)", spec(Preset::MX, Target::Fp4E2M1, Scheme::Block, {}, CalibMethod::Mse));
    row("nvfp4 mse (code search)", spec(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {}, CalibMethod::Mse));
}

} // namespace

int main(int argc, char** argv) {
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    int repeat = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--threads") == 0) threads = static_cast<unsigned>(std::stoi(argv[i + 1]));
        if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1, std::stoi(argv[i + 1]));
        if (std::strcmp(argv[i], "--only") == 0) g_only = argv[i + 1];
    }
    runCase("4096x4096 f32", {4096, 4096}, DType::F32, threads, repeat);
    runCase("11008x4096 bf16", {11008, 4096}, DType::BF16, threads, repeat);
    return 0;
}
