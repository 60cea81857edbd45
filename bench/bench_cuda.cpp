// bench_cuda: the cuda backend's quantize kernel against the GPU's own copy bandwidth, and PyTorch's
// CUDA quantize_per_channel on the same data, in one run so the ratios cancel clocks and noise.
//
//   bench_cuda [--quick] [--no-peers] [--markdown FILE]
//
// The limit is a device-to-device cudaMemcpy of the input's size; its GB/s counts the bytes read
// and written. The kernel runs on data already in device memory (no transfers) and counts the
// input it reads plus one code byte per element; "kernel/copy" is the ratio of the two (target
// 0.8 and more on tensors of 64 MB and more). Each kernel's codes are checked against the cpu
// backend once. The peer runs bench/bench_cuda_peers.py under $QUANTLENS_PYTHON
// (or the python3 on PATH, then the system one) and is skipped, with the reason, when PyTorch or
// its CUDA is missing.
#include "bench_jobs.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_measure.h"
#include "quant/calibration.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

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
        const Peer peer = runPeer(python, rows, cols, dtype, repeat);
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

} // namespace

int main(int argc, char** argv) {
    bool quick = false, withPeers = true;
    std::string markdown;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--no-peers")
            withPeers = false;
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
    md << "Device: " << backend.deviceDescription() << ". Best of N event-timed runs, data on the device.\n\n"
       << "| job | shape | input | impl | ms | GB/s | kernel/copy |\n|---|---|---|---|---:|---:|---:|\n";
    std::fputs(md.str().c_str(), stdout);
    auto emit = [&](const std::string& line) {
        md << line;
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
    };
    const std::vector<std::pair<std::int64_t, std::int64_t>> shapes =
        quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}}
              : std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}, {16384, 8192}};
    const int repeat = 20;
    char line[512];
    try {
        for (auto [rows, cols] : shapes) {
            const std::int64_t n = rows * cols;
            std::vector<float> x(static_cast<std::size_t>(n));
            std::mt19937 rng(1);
            std::normal_distribution<float> d(0.0f, 1.0f);
            for (auto& v : x)
                v = d(rng);
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
                    Job job;
                    job.plan = planQuantization(b.spec, {rows, cols});
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
