#include "cli/spec_options.h"

#include "base/error.h"
#include "cli/cli_error.h"
#include "tensor/shape.h"

#include <algorithm>
#include <charconv>

namespace ql::cli {
namespace {

// Core's SpecError is the command line's usage error (exit code 2).
template <typename F> auto asUsage(F&& f) {
    try {
        return f();
    } catch (const SpecError& e) {
        throw UsageError(e.what());
    }
}

} // namespace

void addSpecOptions(CLI::App& app, SpecOptions& o, bool withGroupSize) {
    CLI::Option* symmetric = nullptr;
    for (const SpecField& f : specFields()) {
        CLI::Option* option = nullptr;
        if (f.count) {
            if (!withGroupSize) continue;
            option = app.add_option(f.flag, o.*f.count, f.help)
                         ->check(CLI::Validator(
                             [](std::string& v) {
                                 std::int64_t n = 0;
                                 const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
                                 return ec == std::errc() && p == v.data() + v.size() && n > 0
                                            ? std::string()
                                            : "must be a positive integer";
                             },
                             "POSITIVE"));
        } else if (f.text) {
            option = app.add_option(f.flag, o.*f.text, f.help);
            if (f.text == &SpecOptions::preset) option->capture_default_str();
        } else {
            option = app.add_flag(f.flag, o.*f.on, f.help);
            if (f.on == &SpecOptions::symmetric) symmetric = option;
            if (f.on == &SpecOptions::asymmetric) symmetric->excludes(option);
        }
        option->group("SPEC");
    }
}

void addIncludeNonWeightsOption(CLI::App& app, bool& include) {
    app.add_flag("--include-non-weights", include,
                 "With --all or --match: also quantize biases, norm and scale vectors (rank 1) and scalars, "
                 "which are otherwise kept as they are and listed")
        ->group("TENSORS");
}

void requireAxesInRange(const QuantSpec& spec, const TensorSource& source,
                        const std::vector<std::string>& names) {
    if (spec.axes.empty() || names.empty()) return;
    std::size_t rank = 0;
    for (const auto& n : names)
        if (const TensorInfo* t = source.find(n)) rank = std::max(rank, t->shape.size());
    const auto r = static_cast<int>(rank);
    for (const int a : spec.axes) {
        if (r == 0) throw UsageError("--axis " + std::to_string(a) + ": every selected tensor is a scalar");
        try {
            normalizeAxis(a, r); // the library's own words, as Python gives them
        } catch (const QuantError& e) {
            throw UsageError(
                std::string(names.size() > 1 ? "--axis fits none of the selected tensors: " : "--axis: ") +
                e.what());
        }
    }
}

QuantSpec buildSpec(const SpecOptions& o) {
    return asUsage([&] { return specFromOptions(o); });
}

std::optional<QuantParams> loadExplicitParams(const SpecOptions& o) {
    return asUsage([&] { return explicitParamsOf(o); });
}

std::vector<float> loadFileTensor(const std::string& arg, const char* flag) {
    return asUsage([&] { return loadSpecTensor(arg, flag); });
}

} // namespace ql::cli
