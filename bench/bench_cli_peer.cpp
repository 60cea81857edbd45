// bench_cli_peer: the quantlens-cli process as users run it (`quantize FILE --all --report R.json`,
// torch per-channel int8 absmax) against the plain one-pass C program doing the same job
// (bench/peers/one_pass_int8.c: the codes, four exact 256-bin histograms, the error sums, one thread
// per core), on a 4096x4096 f32 safetensors file in the page cache. Both run as processes, interleaved
// round by round (each round in another order), and each figure is the median of its rounds, so a
// shared machine's drift falls on both. The CLI's start-up (`quantlens-cli --version`) is timed in the
// same rounds and taken off its time: ratio = (CLI - start-up) / C program.
//
// Before any timing, the C program's codes are compared byte for byte with the codes the CLI exports
// for the same file, and its sums with the CLI's report: a ratio between programs that do different
// work would mean nothing. The program exits 1 when they differ.
//
// Where the CLI's time goes, from the same rounds: the core/job run of the same request in this
// process (what the CLI runs between start-up and the report), split by its backend's own timing
// (before the quantize pass: the calibration's read; the pass: codes and every statistic; the rest:
// the statistics' slices merged and the report's formatting); the process beyond start-up and that job is
// writing the report (the CLI with --report against the CLI without), and what a fresh process pays that the
// benchmark's warm one does not (the first touch of the code buffer's and the mapped file's pages), listing
// the file and exiting. The C program prints its own range read and pass.
//
//   bench_cli_peer [--quick] [--rounds N] [--markdown FILE]
//
// --quick: 3 rounds (the codes and sums are checked all the same).
#include "bench_jobs.h"
#include "builtin_backends.h"
#include "io/tensor_source.h"
#include "job/job.h"
#include "report/report_read.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef QUANTLENS_CLI_PATH
#define QUANTLENS_CLI_PATH ""
#endif
#ifndef QUANTLENS_PEER_PATH
#define QUANTLENS_PEER_PATH ""
#endif

using namespace ql;

namespace {

struct Run {
    double ms = -1; // wall time from fork to exit; -1 when it failed
    std::string out;
};

/// Runs args as a process, stderr discarded, and times it from its spawn to its exit. posix_spawn
/// (a vfork, not a copy of this process's page tables) keeps this process's size out of the figure.
Run runProcess(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int pipeFds[2];
    if (pipe(pipeFds) != 0) return {};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
    posix_spawn_file_actions_addclose(&actions, pipeFds[1]);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipeFds[1]);
    Run run;
    char buf[4096];
    for (ssize_t got; spawned == 0 && (got = read(pipeFds[0], buf, sizeof buf)) > 0;)
        run.out.append(buf, static_cast<std::size_t>(got));
    close(pipeFds[0]);
    int status = 0;
    if (spawned == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return run;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The number after `key` in the C program's output; NaN when it has none.
double peerField(const std::string& out, const std::string& key) {
    const auto at = out.find(key + " ");
    return at == std::string::npos ? std::nan("") : std::strtod(out.c_str() + at + key.size() + 1, nullptr);
}

/// The C program's own timings: total, range read, codes and statistics.
std::array<double, 3> peerTimes(const std::string& out) {
    std::array<double, 3> t{std::nan(""), std::nan(""), std::nan("")};
    const auto colon = out.find("statistics): ");
    double open = 0;
    if (colon != std::string::npos &&
        std::sscanf(out.c_str() + colon,
                    "statistics): %lf ms (open and map %lf, range read %lf, codes and "
                    "statistics %lf)",
                    &t[0], &open, &t[1], &t[2]) != 4)
        t = {std::nan(""), std::nan(""), std::nan("")};
    return t;
}

struct Agreement {
    bool codes = false; // every code equal
    bool sums = false;  // the sums within the oracle tests' tolerance, the counts and the maximum equal
};

/// The C program's codes against the codes the CLI exports for the same file, and its sums against
/// the CLI's report. Prints what differs.
Agreement sameJob(const std::string& dir, const std::string& file, const std::vector<std::string>& flags) {
    const std::string codes = dir + "/cli-codes.safetensors", report = dir + "/cli-check.json",
                      peerCodes = dir + "/peer-codes.i8";
    std::vector<std::string> cli{QUANTLENS_CLI_PATH, "quantize", file, "--all", "-q"};
    cli.insert(cli.end(), flags.begin(), flags.end());
    cli.insert(cli.end(), {"--out", codes, "--export-layout", "native", "--report", report});
    if (runProcess(cli).ms < 0) {
        std::fprintf(stderr, "the CLI's export run failed\n");
        return {};
    }
    const Run peer = runProcess({QUANTLENS_PEER_PATH, file, "--codes", peerCodes});
    if (peer.ms < 0) {
        std::fprintf(stderr, "the C program failed\n");
        return {};
    }
    const Tensor theirs = openTensorSource(codes)->load("w");
    std::ifstream in(peerCodes, std::ios::binary);
    const std::string ours((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (theirs.dtype() != DType::I8 || theirs.byteSize() != ours.size()) {
        std::fprintf(stderr, "codes: the CLI exported %zu bytes of %s, the C program wrote %zu int8 codes\n",
                     theirs.byteSize(), std::string(nameOf(theirs.dtype())).c_str(), ours.size());
        return {};
    }
    std::size_t differ = 0, first = 0;
    for (std::size_t i = ours.size(); i-- > 0;)
        if (static_cast<char>(theirs.data()[i]) != ours[i]) {
            ++differ;
            first = i;
        }
    std::printf("codes: %zu of %zu equal to the CLI's", ours.size() - differ, ours.size());
    if (differ) std::printf(" (first difference at element %zu)", first);
    std::printf("\n");

    std::ifstream reportIn(report);
    const auto json = nlohmann::json::parse(reportIn);
    const ErrorStats::Sums s = reportFromJson(json.at("tensors").at(0)).analysis.stats.sums();
    const double sumSqX = peerField(peer.out, "sum_sq_x"), sumSqErr = peerField(peer.out, "sum_sq_err");
    const auto maxAbsErr = static_cast<float>(peerField(peer.out, "max_abs_err"));
    const double nan = peerField(peer.out, "nan"), inf = peerField(peer.out, "inf");
    // The oracle tests' tolerance for sums added in another order.
    auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-10 * std::max(std::fabs(a), 1.0); };
    const bool sumsAgree = close(sumSqX, s.sumSqX) && close(sumSqErr, s.sumSqErr) &&
                           maxAbsErr == static_cast<float>(s.maxAbsErr) &&
                           nan == static_cast<double>(s.nanX) && inf == static_cast<double>(s.infX);
    std::printf("sums: sum x² %.12g / %.12g, sum error² %.12g / %.12g, max |error| %.9g / %.9g, NaN %g / "
                "%lld, Inf %g / %lld (C program / CLI report): %s\n",
                sumSqX, s.sumSqX, sumSqErr, s.sumSqErr, static_cast<double>(maxAbsErr), s.maxAbsErr, nan,
                static_cast<long long>(s.nanX), inf, static_cast<long long>(s.infX),
                sumsAgree ? "agree" : "DIFFER");
    return {differ == 0, sumsAgree};
}

} // namespace

int main(int argc, char** argv) {
    int rounds = 11;
    std::string markdown;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            rounds = 3;
        else if (a == "--rounds" && i + 1 < argc)
            rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--markdown" && i + 1 < argc)
            markdown = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_cli_peer [--quick] [--rounds N] [--markdown FILE]\n");
            return 2;
        }
    }
    if (std::string(QUANTLENS_CLI_PATH).empty() || std::string(QUANTLENS_PEER_PATH).empty()) {
        std::fprintf(stderr, "bench_cli_peer was built without quantlens-cli or the C program\n");
        return 2;
    }
    std::string dirTemplate = (std::filesystem::temp_directory_path() / "quantlens-bench-XXXXXX").string();
    const std::string dir = mkdtemp(dirTemplate.data());
    const std::int64_t rows = 4096, cols = 4096;
    const std::string file = dir + "/model.safetensors", report = dir + "/report.json";
    {
        std::vector<float> x(static_cast<std::size_t>(rows * cols));
        std::mt19937 rng(1);
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (auto& v : x)
            v = d(rng);
        bench::writeModel(file, rows, cols, DType::F32, x);
    }
    const bench::Family family = bench::families().front(); // int8 per-channel, absmax

    const Agreement same = sameJob(dir, file, family.cliFlags);

    std::vector<std::string> cliArgs{QUANTLENS_CLI_PATH, "quantize", file, "--all", "-q"};
    cliArgs.insert(cliArgs.end(), family.cliFlags.begin(), family.cliFlags.end());
    cliArgs.insert(cliArgs.end(), {"--report", report});
    JobRequest request;
    request.source = openTensorSource(file);
    auto registry = std::make_shared<BackendRegistry>();
    registerBuiltinBackends(*registry);
    request.registry = registry;
    request.spec = family.spec;

    enum Series {
        Cli,
        CliNoReport,
        StartUp,
        Peer,
        PeerOwn,
        PeerRange,
        PeerPass,
        Job,
        Prepare,
        Kernel,
        Backend,
        kSeries
    };
    std::array<std::vector<double>, kSeries> ms; // each series: one value per round, in round order
    auto process = [&](Series s, const std::vector<std::string>& args) {
        const Run r = runProcess(args);
        ms[s].push_back(r.ms);
        return r.ms >= 0;
    };
    std::vector<std::string> cliNoReport = cliArgs;
    cliNoReport.resize(cliNoReport.size() - 2); // without --report R.json
    const std::vector<std::function<bool()>> steps{
        [&] { return process(Cli, cliArgs); },
        [&] { return process(CliNoReport, cliNoReport); },
        [&] {
            return process(StartUp, {QUANTLENS_CLI_PATH, "--version"});
        },
        [&] {
            const Run r = runProcess({QUANTLENS_PEER_PATH, file});
            const auto own = peerTimes(r.out);
            ms[Peer].push_back(r.ms);
            ms[PeerOwn].push_back(own[0]);
            ms[PeerRange].push_back(own[1]);
            ms[PeerPass].push_back(own[2]);
            return r.ms >= 0 && !std::isnan(own[0]);
        },
        [&] {
            const auto start = std::chrono::steady_clock::now();
            const TensorOutcome out = runTensorJob(request, "w");
            ms[Job].push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            const PhaseTimes& t = out.a.report.timing.median;
            ms[Prepare].push_back(t.prepareMs);
            ms[Kernel].push_back(t.kernelMs);
            ms[Backend].push_back(t.totalMs);
            return true;
        },
    };
    for (const auto& step : steps) // warm-up: the page cache, the CLI's libraries, the first-touch pages
        if (!step()) {
            std::fprintf(stderr, "a warm-up run failed\n");
            return 1;
        }
    for (auto& series : ms)
        series.clear();
    for (int r = 0; r < rounds; ++r)
        for (std::size_t k = 0; k < steps.size(); ++k)
            if (!steps[(k + static_cast<std::size_t>(r)) % steps.size()]()) {
                std::fprintf(stderr, "a timed run failed\n");
                return 1;
            }
    // The median over rounds of a figure made from one round's runs (a difference, a ratio), so that
    // each compares runs seconds apart.
    auto perRound = [&](const std::function<double(const std::array<double, kSeries>&)>& f) {
        std::vector<double> v;
        for (int r = 0; r < rounds; ++r) {
            std::array<double, kSeries> round{};
            for (int s = 0; s < kSeries; ++s)
                round[static_cast<std::size_t>(s)] =
                    ms[static_cast<std::size_t>(s)][static_cast<std::size_t>(r)];
            v.push_back(f(round));
        }
        return median(v);
    };
    using R = const std::array<double, kSeries>&;
    const double cliWork = perRound([](R m) { return m[Cli] - m[StartUp]; });
    const double ratio = perRound([](R m) { return (m[Cli] - m[StartUp]) / m[Peer]; });

    std::ostringstream md;
    char line[640];
    auto emit = [&](const char* fmt, auto... args) {
        std::snprintf(line, sizeof line, fmt, args...);
        md << line;
    };
    emit("Machine: %u threads. %dx%d f32, torch per-channel int8 absmax; %d rounds, the runs of a round in "
         "turn (each round starting at another); medians over the rounds. Codes: %s; sums: %s.\n\n",
         std::max(1u, std::thread::hardware_concurrency()), static_cast<int>(rows), static_cast<int>(cols),
         rounds, same.codes ? "equal" : "DIFFERENT", same.sums ? "agree" : "DIFFER");
    md << "| run | median ms | min ms | max ms |\n|---|---:|---:|---:|\n";
    auto row = [&](const char* name, Series s) {
        const auto& v = ms[s];
        emit("| %s | %.1f | %.1f | %.1f |\n", name, median(v), *std::min_element(v.begin(), v.end()),
             *std::max_element(v.begin(), v.end()));
    };
    row("`quantlens-cli quantize FILE --all --calib absmax --report R.json -q` process", Cli);
    row("the same without `--report`", CliNoReport);
    row("`quantlens-cli --version` process (start-up)", StartUp);
    row("C program process (`one_pass_int8 FILE`)", Peer);
    row("C program's own time (open to last count)", PeerOwn);
    emit("\n**(CLI − start-up) / C program = %.2f×** (median of the rounds' ratios; CLI − start-up %.1f ms, "
         "C program %.1f ms; the target: at most 0.6×)\n\n",
         ratio, cliWork, median(ms[Peer]));
    md << "Where the time goes (medians of each round's figures). The CLI's job is timed as the same "
          "core/job "
          "run in the benchmark's process, split by its backend's own timing:\n\n"
          "| CLI part | ms | of CLI − start-up |\n|---|---:|---:|\n";
    auto part = [&](const char* name, const std::function<double(R)>& f) {
        const double partMs = perRound(f);
        emit("| %s | %.1f | %.0f %% |\n", name, partMs, 100 * partMs / cliWork);
    };
    part("backend: before the quantize pass (code buffer; the calibration's read of the input)",
         [](R m) { return m[Prepare]; });
    part("backend: quantize pass (codes and every statistic in one read)", [](R m) { return m[Kernel]; });
    part("backend: the rest of its run", [](R m) { return m[Backend] - m[Prepare] - m[Kernel]; });
    part("job beyond the backend (the statistics' slices merged, the report's formatting)",
         [](R m) { return m[Job] - m[Backend]; });
    part("writing the report (the process with `--report` − without)",
         [](R m) { return m[Cli] - m[CliNoReport]; });
    part("the process without `--report` beyond start-up and the job (a fresh process's first touch of "
         "the code buffer and the mapped file, listing the file, exit)",
         [](R m) { return m[CliNoReport] - m[StartUp] - m[Job]; });
    md << "\n| C program part | ms |\n|---|---:|\n";
    emit("| start-up and exit (process − own time) | %.1f |\n",
         perRound([](R m) { return m[Peer] - m[PeerOwn]; }));
    emit("| range read (each row's absmax) | %.1f |\n", median(ms[PeerRange]));
    emit("| codes and statistics pass | %.1f |\n", median(ms[PeerPass]));
    emit("| the rest (open and map, merging the threads' counts) | %.1f |\n",
         perRound([](R m) { return m[PeerOwn] - m[PeerRange] - m[PeerPass]; }));
    std::fputs(md.str().c_str(), stdout);
    if (!markdown.empty()) std::ofstream(markdown) << md.str();
    std::filesystem::remove_all(dir);
    return same.codes && same.sums ? 0 : 1;
}
