// bench_quantize: QuantLens cpu and cpu-reference against the machine's streaming limit and against
// PyTorch and NumPy doing the same job, all in one run so the ratios cancel machine noise.
//
//   bench_quantize [--quick] [--no-peers] [--no-reference] [--markdown FILE]
//
// The limit is a plain loop that reads fp32 and writes int8 (best of N, same thread count). GB/s
// counts the bytes a job must move: input bytes per pass over memory plus one code byte per element.
// Peers run in bench/peers/quantize_peers.py under $QUANTLENS_PYTHON (default: the system python3,
// which has Debian's python3-torch and python3-numpy).
#include "bench_jobs.h"
#include "bench_limit.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_driver.h"
#include "cpu/cpu_reference_backend.h"
#include "cpu/kernels.h"
#include "tensor/float_formats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <malloc.h>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace ql;
using bench::bestMs;
using bench::limitMs;

namespace {

struct Bench {
    std::string name;
    QuantSpec spec;
    bool given;   // scales supplied; else absmax calibration
    bool measure; // every statistic of the report too
};

std::vector<Bench> benches() {
    return {{"per-tensor int8", bench::perTensorInt8(), true, false},
            {"per-channel int8", bench::perChannelInt8(), true, false},
            {"full job (amax + quantize)", bench::perChannelInt8(), false, false},
            {"full job (+ stats)", bench::perChannelInt8(), false, true},
            {"per-group int4 g128", bench::perGroupInt4G128(), false, false},
            {"fp8 e4m3", bench::tensorRtFp8(), true, false}};
}

// {job: {"torch": ms, "numpy": ms}} from the peer script; a tiny parser for its flat JSON.
std::map<std::string, std::map<std::string, double>> peers(std::int64_t rows, std::int64_t cols,
                                                           const char* dtype, int repeat, unsigned threads) {
    const std::string cmd = bench::peerPython() + " " + bench::peerScript("quantize_peers.py") + " " +
                            std::to_string(rows) + " " + std::to_string(cols) + " " + dtype + " " +
                            std::to_string(repeat) + " " + std::to_string(threads) + " 2>/dev/null";
    std::map<std::string, std::map<std::string, double>> out;
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return out;
    std::string json;
    char buf[4096];
    while (std::size_t k = fread(buf, 1, sizeof buf, f))
        json.append(buf, k);
    pclose(f);
    for (const char* peer : {"torch", "numpy"}) {
        const auto at = json.find(std::string("\"") + peer + "\": {");
        if (at == std::string::npos) continue;
        const auto end = json.find('}', at);
        std::string body = json.substr(at, end - at);
        for (std::size_t p = body.find('{') + 1; p < body.size();) {
            const auto k0 = body.find('"', p), k1 = body.find('"', k0 + 1);
            if (k0 == std::string::npos) break;
            const std::string key = body.substr(k0 + 1, k1 - k0 - 1);
            const auto v0 = body.find(':', k1) + 1;
            const std::string val = body.substr(v0, body.find_first_of(",}", v0) - v0);
            if (val.find("null") == std::string::npos) out[peer][key] = std::stod(val);
            p = body.find_first_of(',', v0);
            if (p == std::string::npos) break;
            ++p;
        }
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false, withPeers = true, withReference = true;
    std::string markdown;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--no-peers")
            withPeers = false;
        else if (a == "--no-reference")
            withReference = false;
        else if (a == "--markdown" && i + 1 < argc)
            markdown = argv[++i];
    }
    // A long-running GUI reuses its heap after the first job; without this every 16-45 MB code buffer
    // would be a fresh mmap whose page faults dominate a 3 ms job. (Stated in RESULTS.md.)
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const CpuBackend cpuBackend;
    const CpuReferenceBackend reference;
    std::ostringstream md;
    md << "Machine: " << threads << " threads, cpu kernels: " << cpu::kernelIsa() << ". Best of N runs.\n\n"
       << "| job | shape | input | impl | ms | ns/elem | GB/s | impl/limit | peer/QuantLens |\n"
       << "|---|---|---|---|---:|---:|---:|---:|---:|\n";
    const std::vector<std::pair<std::int64_t, std::int64_t>> shapes =
        quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}}
              : std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}, {11008, 4096}};
    for (auto [rows, cols] : shapes) {
        const std::int64_t n = rows * cols;
        // Milliseconds per run, so many runs are cheap and the best of them escapes a shared machine's
        // busy moments; the peers take seconds per run and get fewer.
        const int repeat = n > (1 << 25) ? 20 : 40;
        std::vector<float> x(static_cast<std::size_t>(n));
        std::mt19937 rng(1);
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (auto& v : x)
            v = d(rng);
        std::vector<std::int8_t> sink(static_cast<std::size_t>(n));
        const double limit = limitMs(x, sink, threads, repeat);
        const double limitGBs = static_cast<double>(n) * 5.0 / limit / 1e6;
        const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
        char line[512];
        std::snprintf(line, sizeof line,
                      "| streaming limit (read f32, write i8) | %s | f32 | plain loop | %.2f | %.3f | %.1f | "
                      "1.00 | |\n",
                      shape.c_str(), limit, limit * 1e6 / static_cast<double>(n), limitGBs);
        md << line;
        std::fputs(line, stdout);
        std::fflush(stdout);
        for (const char* dtype : {"f32", "bf16"}) {
            const bool bf16 = std::strcmp(dtype, "bf16") == 0;
            BackendTask base;
            base.tensor = Tensor::fromFloats({rows, cols}, x);
            if (bf16) {
                Tensor t(DType::BF16, {rows, cols});
                auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
                for (std::int64_t i = 0; i < n; ++i)
                    p[i] = floatToBf16(x[static_cast<std::size_t>(i)]);
                base.tensor = t;
            }
            const double inBytes = bf16 ? 2.0 : 4.0;
            const auto peerTimes = withPeers ? peers(rows, cols, dtype, 5, threads)
                                             : std::map<std::string, std::map<std::string, double>>{};
            for (const Bench& b : benches()) {
                BackendTask job = base;
                job.plan = resolveSpec(b.spec, {rows, cols});
                if (b.given) job.params = cpuBackend.run(job).params;
                if (b.measure) job.statistics = StatisticsRequest{};
                // reads of the input from memory
                const int passes =
                    cpu::runJob(job, {threads, 1 << 16}, b.measure ? &*job.statistics : nullptr, {}, 0.0, 1.0)
                        .passes;
                double kernel =
                    1e300; // without ql::Codes' zero-fill of the code buffer (PhaseTimes.prepareMs)
                const double qlOnly = bestMs(repeat, [&] {
                    const Result r = cpuBackend.run(job);
                    kernel = std::min(kernel, r.timing.median.totalMs - r.timing.median.prepareMs);
                });
                const double bytes = static_cast<double>(n) * (inBytes * passes + 1.0);
                auto row = [&](const char* impl, double ms, bool isPeer) {
                    const double gbs = bytes / ms / 1e6;
                    char ratio[32] = "";
                    if (isPeer) std::snprintf(ratio, sizeof ratio, "%.1fx", ms / qlOnly);
                    std::snprintf(line, sizeof line,
                                  "| %s | %s | %s | %s | %.2f | %.3f | %.1f | %.2f | %s |\n", b.name.c_str(),
                                  shape.c_str(), dtype, impl, ms, ms * 1e6 / static_cast<double>(n), gbs,
                                  gbs / limitGBs, ratio);
                    md << line;
                    std::fputs(line, stdout);
                    std::fflush(stdout);
                };
                row(passes == 1 ? "QuantLens cpu (1 pass)" : "QuantLens cpu (2 passes)", qlOnly, false);
                if (b.given) row("QuantLens cpu, kernel only", kernel, false);
                if (withReference && n <= (1 << 24) && !b.measure)
                    row("cpu-reference", bestMs(1, [&] { (void)reference.run(job); }), true);
                for (const char* peer : {"torch", "numpy"}) {
                    auto p = peerTimes.find(peer);
                    if (p == peerTimes.end()) continue;
                    auto t = p->second.find(b.name);
                    if (t != p->second.end()) row(peer, t->second, true);
                }
            }
        }
    }
    if (!markdown.empty()) std::ofstream(markdown) << md.str();
    return 0;
}
