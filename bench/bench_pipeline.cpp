// bench_pipeline: what users run, end to end. A safetensors file in the page cache goes through
// core/job (the GUI's and the CLI's pipeline: file view -> calibration -> codes -> every statistic)
// and through the quantlens-cli process, for each calibration and preset family. Each figure is
// printed as a fraction of the streaming limit (read f32, write int8) measured in the same run, so
// a shared machine's noise cancels out.
//
// The NumPy peer (bench/peers/statistics_peer.py) computes the same statistics for the first family
// on the f32 tensor, in the same run.
//
//   bench_pipeline [--quick] [--no-peers] [--markdown FILE]
#include "bench_jobs.h"
#include "bench_limit.h"
#include "builtin_backends.h"
#include "io/safetensors_writer.h"
#include "job/job.h"
#include "tensor/float_formats.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef QUANTLENS_CLI_PATH
#define QUANTLENS_CLI_PATH "" // built without the CLI: its column stays empty
#endif

using namespace ql;
using bench::bestMs;

namespace {

struct Family {
    std::string name;
    QuantSpec spec;
    std::vector<std::string> cliFlags;
};

QuantSpec calibrated(QuantSpec s, CalibMethod m, double percentile = 99.9) {
    s.calibration.method = m;
    s.calibration.percentile = percentile;
    return s;
}

QuantSpec blockFormat(Preset p) {
    QuantSpec s;
    s.preset = p;
    s.target = Target::Fp4E2M1;
    s.scheme = Scheme::Block;
    s.axes = {-1};
    return s;
}

QuantSpec int4Blocks() {
    QuantSpec s;
    s.preset = Preset::TensorRT;
    s.target = Target::Int4;
    s.scheme = Scheme::Block;
    s.axes = {};
    s.block = {1, 128};
    return s;
}

std::vector<Family> families() {
    const QuantSpec pc = bench::perChannelInt8();
    return {
        {"int8 per-channel, absmax", calibrated(pc, CalibMethod::AbsMax), {"--calib", "absmax"}},
        {"int8 per-channel, percentile 99.9",
         calibrated(pc, CalibMethod::Percentile),
         {"--calib", "percentile=99.9"}},
        {"int8 per-channel, mse", calibrated(pc, CalibMethod::Mse), {"--calib", "mse"}},
        {"int8 per-channel, entropy", calibrated(pc, CalibMethod::Entropy), {"--calib", "entropy"}},
        {"int4 block 1x128 (tensorrt)",
         int4Blocks(),
         {"--preset", "tensorrt", "--dtype", "int4", "--block", "1,128"}},
        {"fp8 e4m3 per-tensor",
         calibrated(bench::tensorRtFp8(), CalibMethod::AbsMax),
         {"--preset", "tensorrt", "--dtype", "fp8-e4m3", "--scheme", "per-tensor"}},
        {"mxfp4", blockFormat(Preset::MX), {"--preset", "mx", "--dtype", "fp4-e2m1"}},
        {"nvfp4", blockFormat(Preset::NVFP4), {"--preset", "nvfp4"}},
    };
}

// Wall time of one quantlens-cli run, stdout and stderr discarded.
double cliMs(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        if (std::FILE* null = std::fopen("/dev/null", "w")) {
            dup2(fileno(null), 1);
            dup2(fileno(null), 2);
        }
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// {"quantize_ms", "statistics_ms", "job_ms"} from the NumPy peer; empty when it cannot run.
std::map<std::string, double> numpyPeer(std::int64_t rows, std::int64_t cols, int repeat) {
    const std::string cmd = bench::peerPython() + " " + bench::peerScript("statistics_peer.py") + " " +
                            std::to_string(rows) + " " + std::to_string(cols) + " " + std::to_string(repeat) +
                            " 2>/dev/null";
    std::map<std::string, double> out;
    std::FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return out;
    std::string text;
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe))
        text += buf;
    if (pclose(pipe) != 0) return out;
    for (const char* key : {"quantize_ms", "statistics_ms", "job_ms"}) {
        const auto at = text.find(std::string("\"") + key + "\": ");
        if (at != std::string::npos) out[key] = std::stod(text.substr(at + std::strlen(key) + 4));
    }
    return out;
}

void writeModel(const std::string& path, std::int64_t rows, std::int64_t cols, DType dtype,
                const std::vector<float>& x) {
    Tensor t = Tensor::fromFloats({rows, cols}, x);
    if (dtype == DType::BF16) {
        t = Tensor(DType::BF16, {rows, cols});
        auto* p = reinterpret_cast<std::uint16_t*>(t.mutableData());
        for (std::size_t i = 0; i < x.size(); ++i)
            p[i] = floatToBf16(x[i]);
    }
    writeSafetensors(path, {{"w", t}});
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
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::string dirTemplate = (std::filesystem::temp_directory_path() / "quantlens-bench-XXXXXX").string();
    const std::string dir = mkdtemp(dirTemplate.data());
    auto registry = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*registry);

    std::ostringstream md;
    md << "Machine: " << threads << " threads. Best of N runs; `of limit` = streaming-limit time / job time "
       << "(1.00 = as fast as reading the f32 input and writing int8 codes once).\n\n"
       << "| job | tensor | core/job ms | of limit | backend ms | statistics ms | CLI process ms | CLI of "
          "limit |\n"
       << "|---|---|---:|---:|---:|---:|---:|---:|\n";
    struct Shape2 {
        std::int64_t rows, cols;
        DType dtype;
    };
    const std::vector<Shape2> shapes =
        quick ? std::vector<Shape2>{{4096, 4096, DType::F32}}
              : std::vector<Shape2>{{4096, 4096, DType::F32}, {11008, 4096, DType::BF16}};
    for (const Shape2& sh : shapes) {
        const std::int64_t n = sh.rows * sh.cols;
        std::vector<float> x(static_cast<std::size_t>(n));
        std::mt19937 rng(1);
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (auto& v : x)
            v = d(rng);
        std::vector<std::int8_t> sink(static_cast<std::size_t>(n));
        const double limit = bench::limitMs(x, sink, threads, 20);
        const std::string file = dir + "/model-" + std::string(nameOf(sh.dtype)) + ".safetensors";
        writeModel(file, sh.rows, sh.cols, sh.dtype, x);
        x = {};
        const std::string tensor =
            std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + " " + std::string(nameOf(sh.dtype));
        char line[512];
        std::snprintf(line, sizeof line,
                      "| streaming limit (read f32, write i8) | %s | %.2f | 1.00 | | | | |\n", tensor.c_str(),
                      limit);
        md << line;
        std::fputs(line, stdout);
        std::fflush(stdout);
        for (const Family& f : families()) {
            JobRequest request;
            request.source = openTensorSource(file);
            request.registry = registry;
            request.spec = f.spec;
            const int repeat = quick ? 3 : 5;
            double backendMs = 1e300;
            const double jobMs = bestMs(repeat, [&] {
                const TensorOutcome out = runTensorJob(request, "w");
                backendMs = std::min(backendMs, out.a.report.timing.median.totalMs);
            });
            std::vector<std::string> args{QUANTLENS_CLI_PATH, "quantize", file, "--all", "-q"};
            args.insert(args.end(), f.cliFlags.begin(), f.cliFlags.end());
            double cli = std::string(QUANTLENS_CLI_PATH).empty() ? -1 : 1e300;
            for (int r = 0; r < 3 && cli > 0; ++r)
                cli = std::min(cli, cliMs(args));
            std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.3f | %.1f | %.1f | %.1f | %.3f |\n",
                          f.name.c_str(), tensor.c_str(), jobMs, limit / jobMs, backendMs, jobMs - backendMs,
                          cli, limit / cli);
            md << line;
            std::fputs(line, stdout);
            std::fflush(stdout);
        }
        // NumPy computing the same statistics as the first family (f32 only: NumPy has no bf16).
        if (withPeers && sh.dtype == DType::F32) {
            const auto peer = numpyPeer(sh.rows, sh.cols, quick ? 2 : 3);
            if (peer.count("job_ms")) {
                std::snprintf(line, sizeof line,
                              "| NumPy peer: %s, same statistics | %s | %.1f | %.3f | %.1f | %.1f | | |\n",
                              families().front().name.c_str(), tensor.c_str(), peer.at("job_ms"),
                              limit / peer.at("job_ms"), peer.at("quantize_ms"), peer.at("statistics_ms"));
                md << line;
                std::fputs(line, stdout);
            }
        }
        std::filesystem::remove(file);
    }
    std::filesystem::remove_all(dir);
    if (!markdown.empty()) std::ofstream(markdown) << md.str();
    return 0;
}
