// bench_cuda: the cuda backend end to end, and its quantize kernel alone, each against a bound
// measured in the same run so the ratios cancel clocks and noise.
//
//   bench_cuda [--quick] [--no-peers] [--end-to-end] [--markdown FILE]
//
// End to end: a safetensors file in the page cache goes through core/job (what the GUI and the CLI
// run) on the cuda backend, for each calibration and preset family of bench_pipeline. The bound is
// the input's host-to-device copy plus the codes' device-to-host copy at the pinned bandwidth this
// run measures; "of bound" is the job's time over it (target 1.25 at most). The same job with every
// statistic (made on the device), and the cpu backend's job on the same machine, stand beside it, and
// the quantlens-cli process runs `quantize --all` on the file with each backend.
//
// The limit is a device-to-device cudaMemcpy of the input's size; its GB/s counts the bytes read
// and written. The kernel runs on data already in device memory (no transfers) and counts the
// input it reads plus one code byte per element; "kernel/copy" is the ratio of the two (target
// 0.8 and more on tensors of 64 MB and more). Each kernel's codes are checked against the cpu
// backend once. The peer runs bench/bench_cuda_peers.py under $QUANTLENS_PYTHON
// (or the python3 on PATH, then the system one) and is skipped, with the reason, when PyTorch or
// its CUDA is missing.
#include "bench_jobs.h"
#include "bench_limit.h"
#include "builtin_backends.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_measure.h"
#include "job/job.h"
#include "quant/calibration.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef QUANTLENS_CLI_PATH
#define QUANTLENS_CLI_PATH "" // built without the CLI: its rows are left out
#endif

using namespace ql;

namespace {

struct Bench {
    std::string name;
    QuantSpec spec;
};

std::vector<Bench> benches() {
    return {{"per-tensor int8", bench::perTensorInt8()},
            {"per-channel int8", bench::perChannelInt8()},
            {"per-group int4 g128", bench::perGroupInt4G128()},
            {"fp8 e4m3", bench::tensorRtFp8()}};
}

// $QUANTLENS_PYTHON alone when set; else the python3 on PATH (where a CUDA build of PyTorch is
// usually installed), then the system one.
std::vector<std::string> pythons() {
    if (const char* p = std::getenv("QUANTLENS_PYTHON"); p && *p) return {p};
    return {"python3", "/usr/bin/python3"};
}

// The peer's answer: {"ms": <best>} or {"skip": "<why>"} on one line.
struct Peer {
    double ms = -1;
    std::string skip;
};

Peer runPeer(const std::string& python, std::int64_t rows, std::int64_t cols, const char* dtype, int repeat) {
    std::string dir = __FILE__;
    dir = dir.substr(0, dir.find_last_of('/'));
    const std::string cmd = python + " " + dir + "/bench_cuda_peers.py " + std::to_string(rows) + " " +
                            std::to_string(cols) + " " + dtype + " " + std::to_string(repeat) + " 2>&1";
    Peer peer;
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return {-1, "cannot start " + python};
    std::string out;
    char buf[4096];
    while (std::size_t k = fread(buf, 1, sizeof buf, f))
        out.append(buf, k);
    const int status = pclose(f);
    if (const auto at = out.find("\"ms\": "); at != std::string::npos) {
        peer.ms = std::stod(out.substr(at + 6));
    } else if (const auto s = out.find("\"skip\": \""); s != std::string::npos) {
        peer.skip = python + ": " + out.substr(s + 9, out.find('"', s + 9) - s - 9);
    } else {
        peer.skip = python + " failed (status " + std::to_string(status) + "): " + out.substr(0, 200);
    }
    return peer;
}

Peer torchPeer(std::int64_t rows, std::int64_t cols, const char* dtype, int repeat) {
    std::string skipped;
    for (const std::string& python : pythons()) {
        Peer peer = runPeer(python, rows, cols, dtype, repeat);
        if (peer.ms > 0) return peer;
        skipped += (skipped.empty() ? "" : "; ") + peer.skip;
    }
    return {-1, skipped};
}

Tensor tensorOf(const std::vector<float>& x, std::int64_t rows, std::int64_t cols, bool bf16) {
    if (!bf16) return Tensor::fromFloats({rows, cols}, x);
    Tensor t(DType::BF16, {rows, cols});
    auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
    for (std::size_t i = 0; i < x.size(); ++i)
        p[i] = floatToBf16(x[i]);
    return t;
}

std::vector<float> normalValues(std::int64_t n) {
    std::vector<float> x(static_cast<std::size_t>(n));
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (auto& v : x)
        v = d(rng);
    return x;
}

// The user path on both backends, for every family, on one file; rows go to `emit`.
template <class Emit>
void endToEnd(std::int64_t rows, std::int64_t cols, DType dtype, bool quick, Emit&& emit) {
    const std::int64_t n = rows * cols;
    std::string dirTemplate = (std::filesystem::temp_directory_path() / "quantlens-bench-XXXXXX").string();
    const std::string dir = mkdtemp(dirTemplate.data());
    const std::string file = dir + "/model.safetensors";
    bench::writeModel(file, rows, cols, dtype, normalValues(n));
    auto registry = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*registry);
    const std::string tensor =
        std::to_string(rows) + "x" + std::to_string(cols) + " " + std::string(nameOf(dtype));
    const auto inBytes = static_cast<std::size_t>(n) * (dtype == DType::F32 ? 4 : 2);
    const auto codeBytes = static_cast<std::size_t>(n);
    const double h2dMs = cuda::bestPinnedCopyMs(inBytes, true, 10);
    const double d2hMs = cuda::bestPinnedCopyMs(codeBytes, false, 10);
    const double bound = h2dMs + d2hMs;
    char line[768];
    std::snprintf(
        line, sizeof line,
        "| transfer bound: input H2D %.1f GB/s + codes D2H %.1f GB/s (pinned) | %s | %.2f | 1.00 | | | "
        "|\n",
        static_cast<double>(inBytes) / h2dMs / 1e6, static_cast<double>(codeBytes) / d2hMs / 1e6,
        tensor.c_str(), bound);
    emit(line);
    const int repeat = quick ? 3 : 5;
    auto jobMs = [&](const QuantSpec& spec, const char* backend, bool codesOnly, PhaseTimes* phases) {
        JobRequest request;
        request.source = openTensorSource(file);
        request.registry = registry;
        request.spec = spec;
        request.backend = backend;
        request.codesOnly = codesOnly;
        return bench::bestMs(repeat, [&] {
            const TensorOutcome out = runTensorJob(request, "w");
            if (phases) *phases = out.a.report.timing.median;
        });
    };
    for (const bench::Family& f : bench::families()) {
        PhaseTimes p;
        const double codes = jobMs(f.spec, "cuda", true, &p);
        const double stats = jobMs(f.spec, "cuda", false, nullptr);
        const double cpu = jobMs(f.spec, "cpu", false, nullptr);
        std::snprintf(line, sizeof line,
                      "| %s | %s | %.2f | %.2f | %.1f / %.1f / %.2f / %.1f | %.1f | %.1f |\n", f.name.c_str(),
                      tensor.c_str(), codes, codes / bound, p.prepareMs, p.uploadMs, p.kernelMs, p.downloadMs,
                      stats, cpu);
        emit(line);
    }
    if (!std::string(QUANTLENS_CLI_PATH).empty()) {
        for (const char* backend : {"cuda", "cpu"}) {
            double best = 1e300;
            for (int r = 0; r < 3; ++r)
                best = std::min(best, bench::cliMs({QUANTLENS_CLI_PATH, "quantize", file, "--all", "-q",
                                                    "--backend", backend}));
            std::snprintf(
                line, sizeof line,
                "| `quantlens-cli quantize --all --backend %s` (process, with statistics) | %s | %.1f "
                "| %.2f | | | |\n",
                backend, tensor.c_str(), best, best / bound);
            emit(line);
        }
    }
    std::filesystem::remove_all(dir);
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false, withPeers = true, kernels = true;
    std::string markdown;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--no-peers")
            withPeers = false;
        else if (a == "--end-to-end")
            kernels = false;
        else if (a == "--markdown" && i + 1 < argc)
            markdown = argv[++i];
    }
    const CudaBackend backend;
    if (auto why = backend.unavailableReason()) {
        std::printf("bench_cuda: %s; nothing to measure.\n", why->c_str());
        return 0;
    }
    const CpuBackend cpu;
    std::ostringstream md;
    auto emit = [&](const std::string& line) {
        md << line;
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
    };
    emit("Device: " + backend.deviceDescription() + ", host: " + cpu.deviceDescription() +
         ".\n\nEnd to end: a safetensors file in the page cache through core/job, best of N. Phases of the "
         "codes-only job: calibration (on the host, during the upload) / upload / kernel / download.\n\n"
         "| job | tensor | cuda, codes ms | of bound | cuda phases ms | cuda + statistics ms | cpu + "
         "statistics ms |\n|---|---|---:|---:|---|---:|---:|\n");
    try {
        for (const auto& [rows, cols, dtype] :
             quick ? std::vector<std::tuple<std::int64_t, std::int64_t, DType>>{{4096, 4096, DType::F32}}
                   : std::vector<std::tuple<std::int64_t, std::int64_t, DType>>{{8192, 8192, DType::F32},
                                                                                {8192, 8192, DType::BF16}})
            endToEnd(rows, cols, dtype, quick, emit);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_cuda: %s\n", e.what());
        return 1;
    }
    if (!kernels) {
        if (!markdown.empty()) std::ofstream(markdown) << md.str();
        return 0;
    }
    emit("\nKernel only: best of N event-timed launches, data already on the device.\n\n"
         "| job | shape | input | impl | ms | GB/s | kernel/copy |\n|---|---|---|---|---:|---:|---:|\n");
    const std::vector<std::pair<std::int64_t, std::int64_t>> shapes =
        quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}}
              : std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}, {16384, 8192}};
    const int repeat = 20;
    char line[512];
    try {
        for (auto [rows, cols] : shapes) {
            const std::int64_t n = rows * cols;
            const std::vector<float> x = normalValues(n);
            const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
            for (const char* dtype : {"f32", "bf16"}) {
                const bool bf16 = std::strcmp(dtype, "bf16") == 0;
                const double inBytes = bf16 ? 2.0 : 4.0;
                const Tensor input = tensorOf(x, rows, cols, bf16);
                const std::vector<float> widened = bf16 ? input.toFloatVector() : std::vector<float>{};
                const auto copyBytes = static_cast<std::size_t>(static_cast<double>(n) * inBytes);
                const double copyMs = cuda::bestCopyMs(copyBytes, repeat);
                const double copyGBs = 2.0 * static_cast<double>(copyBytes) / copyMs / 1e6;
                std::snprintf(
                    line, sizeof line,
                    "| device copy (read + write) | %s | %s | cudaMemcpy D2D | %.3f | %.0f | 1.00 |\n",
                    shape.c_str(), dtype, copyMs, copyGBs);
                emit(line);
                for (const Bench& b : benches()) {
                    BackendTask job;
                    job.plan = resolveSpec(b.spec, {rows, cols});
                    job.tensor = input;
                    job.params = calibrate(job.plan, bf16 ? widened : x);
                    const Codes expected = cpu.run(job).codes;
                    const double ms = cuda::bestKernelMs(job.plan, *job.params, input, repeat, expected);
                    const double gbs = static_cast<double>(n) * (inBytes + 1.0) / ms / 1e6;
                    std::snprintf(line, sizeof line,
                                  "| %s | %s | %s | QuantLens cuda kernel | %.3f | %.0f | %.2f |\n",
                                  b.name.c_str(), shape.c_str(), dtype, ms, gbs, gbs / copyGBs);
                    emit(line);
                }
                if (!withPeers) continue;
                const Peer peer = torchPeer(rows, cols, dtype, repeat);
                if (peer.ms > 0) {
                    const double gbs = static_cast<double>(n) * (inBytes + 1.0) / peer.ms / 1e6;
                    std::snprintf(
                        line, sizeof line,
                        "| per-channel int8 | %s | %s | torch.quantize_per_channel (CUDA) | %.3f | %.0f "
                        "| %.2f |\n",
                        shape.c_str(), dtype, peer.ms, gbs, gbs / copyGBs);
                    emit(line);
                } else {
                    std::printf("(PyTorch peer skipped for %s %s: %s)\n", shape.c_str(), dtype,
                                peer.skip.c_str());
                }
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_cuda: %s\n", e.what());
        return 1;
    }
    if (!markdown.empty()) std::ofstream(markdown) << md.str();
    return 0;
}
