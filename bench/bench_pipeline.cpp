// bench_pipeline: what users run, end to end. A safetensors file in the page cache goes through
// core/job (the GUI's and the CLI's pipeline: file view -> calibration -> codes -> every statistic)
// and through the quantlens-cli process, for each calibration and preset family. Each figure is
// printed as a fraction of the streaming limit (read f32, write int8) timed in turn with that job, so
// a shared machine's noise and drift cancel out. The counting floor timed beside it (read the input,
// make the four histogram counts per element as the analysis pass counts them, nothing else) bounds
// what a job that counts that way can reach.
//
// The NumPy peer (bench/peers/statistics_peer.py) computes the same statistics for the first family
// on the f32 tensor, in the same run.
//
//   bench_pipeline [--quick] [--no-peers] [--only TEXT] [--markdown FILE]
//
// --only keeps the families whose name contains TEXT (the int8 per-channel absmax job, the ratios'
// base, always runs).
#include "bench_jobs.h"
#include "bench_limit.h"
#include "builtin_backends.h"
#include "cpu/cpu_backend.h"
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

namespace {

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

} // namespace

int main(int argc, char** argv) {
    bool quick = false, withPeers = true;
    std::string markdown, only;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--no-peers")
            withPeers = false;
        else if (a == "--markdown" && i + 1 < argc)
            markdown = argv[++i];
        else if (a == "--only" && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: bench_pipeline [--quick] [--no-peers] [--only TEXT] [--markdown FILE]\n");
            return 2;
        }
    }
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::string dirTemplate = (std::filesystem::temp_directory_path() / "quantlens-bench-XXXXXX").string();
    const std::string dir = mkdtemp(dirTemplate.data());
    auto registry = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*registry);

    std::ostringstream md;
    md << "Machine: " << threads << " threads. Best of N runs, each job's timed in turn with the streaming "
       << "limit, the counting floor and (other families) the int8 per-channel absmax job; `of limit` = "
       << "streaming-limit time / job time (1.00 = as fast as reading the f32 input and writing int8 codes "
       << "once); `× floor` = job time / counting-floor time; `× int8 job` = job time / the int8 job's on "
       << "the same tensor.\n\n"
       << "| job | tensor | core/job ms | limit ms | of limit | × floor | × int8 job | backend ms | "
          "statistics ms | CLI process ms | CLI of limit |\n"
       << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
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
        auto limitRun = [&] { bench::limitRun(x, sink, threads); };
        std::vector<std::uint16_t> stored; // the 16-bit values a bf16 job reads, for its counting floor
        if (sh.dtype != DType::F32) {
            stored.resize(x.size());
            for (std::size_t i = 0; i < x.size(); ++i)
                stored[i] = floatToBf16(x[i]);
        }
        auto floorRun = [&] {
            if (stored.empty())
                bench::countingFloorRun(x, threads);
            else
                bench::countingFloorRun(stored, threads);
        };
        const std::string file = dir + "/model-" + std::string(nameOf(sh.dtype)) + ".safetensors";
        bench::writeModel(file, sh.rows, sh.cols, sh.dtype, x);
        const std::string tensor =
            std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + " " + std::string(nameOf(sh.dtype));
        char line[512];
        auto emit = [&] {
            md << line;
            std::fputs(line, stdout);
            std::fflush(stdout);
        };
        double firstJobMs = 0;                     // the first family's, int8 per-channel absmax
        double firstLimitMs = 0, firstFloorMs = 0; // timed in turn with it
        JobRequest base;                           // its request, timed again in turn with each other family
        for (const bench::Family& f : bench::families()) {
            if (firstJobMs > 0 && f.name.find(only) == std::string::npos) continue;
            JobRequest request;
            request.source = openTensorSource(file);
            request.registry = registry;
            request.spec = f.spec;
            const int repeat = quick ? 3 : 5;
            double backendMs = 1e300;
            auto job = [&] {
                const TensorOutcome out = runTensorJob(request, "w");
                backendMs = std::min(backendMs, out.a.report.timing.median.totalMs);
            };
            // The limit, the floor, and (other families) the int8 job, each timed in turn with this job.
            double jobMs = 0, baseInTurnMs = 0, limit = 0, floor = 0;
            if (firstJobMs == 0) {
                base = request;
                const auto ms = bench::bestMsInTurn(repeat, {{limitRun, 4}, {floorRun, 2}, {job}});
                limit = ms[0];
                floor = ms[1];
                jobMs = baseInTurnMs = ms[2];
                firstLimitMs = limit;
                firstFloorMs = floor;
                std::snprintf(
                    line, sizeof line,
                    "| streaming limit (read f32, write i8) | %s | %.2f | %.2f | 1.00 | | | | | | |\n",
                    tensor.c_str(), limit, limit);
                emit();
                std::snprintf(line, sizeof line,
                              "| counting floor (read the input, four histogram counts per element) | %s | "
                              "%.2f | %.2f | %.3f | 1.00 | | | | | |\n",
                              tensor.c_str(), floor, limit, limit / floor);
                emit();
            } else {
                const auto ms = bench::bestMsInTurn(
                    repeat, {{limitRun, 4}, {floorRun, 2}, {[&] { runTensorJob(base, "w"); }}, {job}});
                limit = ms[0];
                floor = ms[1];
                baseInTurnMs = ms[2];
                jobMs = ms[3];
            }
            std::vector<std::string> args{QUANTLENS_CLI_PATH, "quantize", file, "--all", "-q"};
            args.insert(args.end(), f.cliFlags.begin(), f.cliFlags.end());
            double cli = std::string(QUANTLENS_CLI_PATH).empty() ? -1 : 1e300;
            for (int r = 0; r < 3 && cli > 0; ++r)
                cli = std::min(cli, bench::cliMs(args));
            if (firstJobMs == 0) firstJobMs = jobMs;
            std::snprintf(line, sizeof line,
                          "| %s | %s | %.1f | %.2f | %.3f | %.2f | %.2f | %.1f | %.1f | %.1f | %.3f |\n",
                          f.name.c_str(), tensor.c_str(), jobMs, limit, limit / jobMs, jobMs / floor,
                          jobMs / baseInTurnMs, backendMs, jobMs - backendMs, cli, limit / cli);
            emit();
        }
        // The statistics in the backend's own pass against the design before it: the codes, then the
        // separate analysis pass over the input and the codes (three reads of the input, not two). The
        // first family's backend task on the in-memory tensor, each timed in turn with the limit and
        // the floor.
        {
            BackendTask task;
            task.tensor = bench::tensorOf(sh.rows, sh.cols, sh.dtype, x);
            task.plan = resolveSpec(bench::families().front().spec, {sh.rows, sh.cols});
            task.statistics = StatisticsRequest{};
            BackendTask codesOnly = task;
            codesOnly.statistics.reset();
            const CpuBackend cpu;
            auto inPass = [&] { (void)cpu.run(task); };
            auto apart = [&] {
                const Result r = cpu.run(codesOnly);
                std::vector<float> storage;
                (void)accumulate(r.plan, r.params, r.codes, jobView(task, storage), *task.statistics);
            };
            const auto ms =
                bench::bestMsInTurn(quick ? 3 : 5, {{limitRun, 4}, {floorRun, 2}, {inPass}, {apart}});
            const std::pair<const char*, double> rows[] = {
                {"cpu backend, int8 per-channel absmax, statistics in its pass", ms[2]},
                {"cpu backend, the same, codes then the analysis pass apart (before)", ms[3]}};
            for (const auto& [name, jobMs] : rows) {
                std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.2f | %.3f | %.2f | | | | | |\n", name,
                              tensor.c_str(), jobMs, ms[0], ms[0] / jobMs, jobMs / ms[1]);
                emit();
            }
        }
        // NumPy computing the same statistics as the first family (f32 only: NumPy has no bf16),
        // against the limit and floor timed with that family (a process of seconds is not timed in turn).
        if (withPeers && sh.dtype == DType::F32) {
            const auto peer = numpyPeer(sh.rows, sh.cols, quick ? 2 : 3);
            if (peer.count("job_ms")) {
                std::snprintf(line, sizeof line,
                              "| NumPy peer: %s, same statistics | %s | %.1f | %.2f | %.3f | %.2f | %.2f | "
                              "%.1f | %.1f | | |\n",
                              bench::families().front().name.c_str(), tensor.c_str(), peer.at("job_ms"),
                              firstLimitMs, firstLimitMs / peer.at("job_ms"),
                              peer.at("job_ms") / firstFloorMs, peer.at("job_ms") / firstJobMs,
                              peer.at("quantize_ms"), peer.at("statistics_ms"));
                emit();
            }
        }
        std::filesystem::remove(file);
    }
    std::filesystem::remove_all(dir);
    if (!markdown.empty()) std::ofstream(markdown) << md.str();
    return 0;
}
