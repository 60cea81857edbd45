#pragma once
// The subcommands. Each adds its flags to the parser and runs from the parsed options;
// run functions return the exit code and throw UsageError / QuantError / FileError on failure.
#include "cli/spec_options.h"
#include "runtime/evaluate_job.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ql::cli {

struct InspectOptions {
    std::string file;
    bool json = false;
};
CLI::App* addInspect(CLI::App& parent, InspectOptions& o);
int runInspect(const InspectOptions& o);

struct QuantizeOptions {
    std::string file;
    std::vector<std::string> tensors;
    std::string match;
    bool all = false;
    bool includeNonWeights = false;
    SpecOptions spec;
    std::string backend = "cpu";
    std::string out;
    std::string exportLayout = "compressed-tensors";
    std::string report;
    std::string importance;
    int repeat = 1;
    bool strict = false;
    bool quiet = false;
    std::string shard; // "I/N": run only shard I of N (cli/shard_run.h)
    bool resume = false;
};
CLI::App* addQuantize(CLI::App& parent, QuantizeOptions& o);
int runQuantize(const QuantizeOptions& o);

struct CompareOptions {
    std::string file;
    std::string tensor;
    SpecOptions spec;
    std::string backend = "cpu";
    std::string backendB;
    std::string presetB;
    std::string report;
    std::string importance;
    int repeat = 1;
    bool failOnMismatch = false;
    bool quiet = false;
};
CLI::App* addCompare(CLI::App& parent, CompareOptions& o);
int runCompare(const CompareOptions& o);

struct SweepOptions {
    std::string file;
    std::string tensor;
    SpecOptions spec;
    std::string groupSizes;
    std::string backend = "cpu";
    std::string report;
    std::string importance;
    bool quiet = false;
};
CLI::App* addSweep(CLI::App& parent, SweepOptions& o);
int runSweep(const SweepOptions& o);

struct MergeOptions {
    std::vector<std::string> parts;
    std::string out;
    bool quiet = false;
};
CLI::App* addMerge(CLI::App& parent, MergeOptions& o);
int runMerge(const MergeOptions& o);

struct CheckOptions {
    std::string report;
    std::vector<std::string> rules;
    std::string rulesFile;
    std::string junit;
    std::string html;
    bool quiet = false;
};
CLI::App* addCheck(CLI::App& parent, CheckOptions& o);
int runCheck(const CheckOptions& o);

struct DiffOptions {
    std::string a;
    std::string b;
    std::vector<std::string> tensors;
    std::string match;
    std::vector<std::string> rules;
    std::string report;
    std::string shard; // "I/N"
    bool quiet = false;
    bool requantize = false; // quantize A with `spec` and compare its codes with B's stored ones
    SpecOptions spec;
    std::string backend = "cpu";
};
CLI::App* addDiff(CLI::App& parent, DiffOptions& o);
int runDiff(const DiffOptions& o);

struct PlanOptions {
    std::string file;
    std::vector<std::string> tensors;
    std::string match;
    std::string candidates;          // comma-separated default names
    std::vector<std::string> custom; // "NAME: SPEC FLAGS"
    double bitsPerWeight = 0;
    std::int64_t bytes = 0;
    std::string importance;
    std::string from;
    std::string backend = "cpu";
    std::string report;
    std::string llamaRules;
    std::string recipe;
    std::string out;
    bool includeNonWeights = false;
    bool quiet = false;
    std::string objective = "weights"; // or "output": measured through ONNX Runtime
    ql::EvaluateOptions samples;       // --inputs / --random / --seed for the output objective
    std::vector<std::string> dims;     // NAME=N
};
CLI::App* addPlan(CLI::App& parent, PlanOptions& o);
int runPlan(const PlanOptions& o);

// evaluate: the evaluation's own options, and the CLI's.
struct EvaluateCliOptions {
    std::string model;
    SpecOptions spec;
    std::string backend = "cpu";
    std::vector<std::string> dims; // NAME=N
    bool noLocal = false;
    int layers = 20;
    std::string report;
    std::string saveOutputs;
    std::string activations; // each weight's input_sq_mean (.safetensors)
    bool quiet = false;
};
/// The model's samples as evaluate and `plan --objective output` take them: --inputs FILE, or --random N
/// with --seed and --dim NAME=N (repeatable) for dynamic dimensions; into `o` (inputs, random, seed,
/// dims). Throws UsageError for a --dim that is not NAME=N or comes without --random.
void addSampleOptions(CLI::App& cmd, ql::EvaluateOptions& o, std::vector<std::string>& dims);
void parseSampleOptions(ql::EvaluateOptions& o, const std::vector<std::string>& dims);
CLI::App* addEvaluate(CLI::App& parent, ql::EvaluateOptions& o, EvaluateCliOptions& c);
int runEvaluate(ql::EvaluateOptions o, const EvaluateCliOptions& c);

CLI::App* addBackends(CLI::App& parent);
int runBackends();

} // namespace ql::cli
