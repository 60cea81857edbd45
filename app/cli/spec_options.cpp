#include "cli/spec_options.h"

#include "cli/cli_error.h"
#include "job/suggest.h"
#include "tensor/error.h"
#include "tensor/whole_number.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ql::cli {
namespace {

std::vector<std::int64_t> parseIntList(const std::string& text, const char* flag) {
    std::vector<std::int64_t> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = std::min(text.find(',', pos), text.size());
        std::int64_t v = 0;
        const char* first = text.data() + pos;
        const char* last = text.data() + comma;
        if (*first == '+') ++first;
        const auto [ptr, ec] = std::from_chars(first, last, v);
        if (ec != std::errc() || ptr != last || first == last)
            throw UsageError(std::string(flag) + " expects integers separated by commas, got '" + text + "'");
        out.push_back(v);
        pos = comma + 1;
    }
    return out;
}

Calibration parseCalib(const std::string& text) {
    Calibration c;
    if (text.empty() || text == "absmax") return c;
    if (text == "minmax")
        c.method = CalibMethod::MinMax;
    else if (text == "mse")
        c.method = CalibMethod::Mse;
    else if (text == "entropy")
        c.method = CalibMethod::Entropy;
    else if (text == "file")
        c.method = CalibMethod::Explicit;
    else if (text.rfind("percentile", 0) == 0) {
        c.method = CalibMethod::Percentile;
        if (text.size() > 10) {
            if (text[10] != '=') throw UsageError("--calib percentile takes its value as percentile=P");
            try {
                std::size_t used = 0;
                c.percentile = std::stod(text.substr(11), &used);
                if (used != text.size() - 11) throw std::invalid_argument(text);
            } catch (const std::exception&) {
                throw UsageError("--calib percentile=P needs a number, got '" + text.substr(11) + "'");
            }
            if (!(c.percentile > 0 && c.percentile <= 100))
                throw UsageError("--calib percentile=P needs 0 < P <= 100, got " + text.substr(11));
        }
    } else {
        throw UsageError("unknown --calib '" + text +
                         "' (choose absmax, minmax, percentile=P, mse, entropy, file)");
    }
    return c;
}

Target parseTarget(const SpecOptions& o, Preset preset) {
    if (o.dtype.empty()) return presetInfo(preset).defaultTarget; // block formats have their own
    if (auto t = targetFromName(o.dtype)) return *t;
    throw UsageError("unknown --dtype '" + o.dtype +
                     "' (choose int8, uint8, int4, uint4, int32, fp8-e4m3, fp8-e5m2, fp4-e2m1)");
}

Scheme parseScheme(const SpecOptions& o, Preset preset) {
    if (!o.scheme.empty()) {
        if (auto s = schemeFromName(o.scheme)) return *s;
        throw UsageError("unknown --scheme '" + o.scheme +
                         "' (choose per-tensor, per-channel, per-group, block, ragged)");
    }
    if (!o.groupIndex.empty()) return Scheme::Ragged;
    if (!o.block.empty() || isBlockFormat(preset)) return Scheme::Block;
    if (o.groupSize > 0) return Scheme::PerGroup;
    return Scheme::PerChannel;
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

std::vector<std::int64_t> loadGroupEnds(const std::string& spec) {
    std::vector<std::int64_t> ends;
    for (float v : loadFileTensor(spec, "--group-index")) {
        // Checked before the conversion: a float beyond int64 (1e30, inf) has no integer value at all.
        const auto end = wholeNumber(v);
        if (!end) {
            char text[32];
            std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
            throw UsageError("--group-index " + spec + ": entry " + std::to_string(ends.size()) + " is " +
                             text + "; entries must be whole numbers of rows");
        }
        ends.push_back(*end);
    }
    return ends;
}

// An option that shapes another scheme's groups, or an axis for the one scale of per-tensor, would be
// ignored without a word (`--scheme per-tensor --block 32` quantized per tensor): refused, naming the
// scheme it belongs to.
void refuseOtherSchemesOptions(const SpecOptions& o, const QuantSpec& spec) {
    const std::string scheme = isBlockFormat(spec.preset) ? std::string(nameOf(spec.preset)) + " blocks"
                                                          : "--scheme " + std::string(nameOf(spec.scheme));
    auto refuse = [&](const char* flag, Scheme owner) {
        throw UsageError(std::string(flag) + " sets the groups of --scheme " + std::string(nameOf(owner)) +
                         "; with " + scheme + " it would change nothing: leave it out");
    };
    if (!o.block.empty() && spec.scheme != Scheme::Block) refuse("--block", Scheme::Block);
    if (o.groupSize > 0 && spec.scheme != Scheme::PerGroup) refuse("--group-size", Scheme::PerGroup);
    if (!o.groupIndex.empty() && spec.scheme != Scheme::Ragged) refuse("--group-index", Scheme::Ragged);
    if (!o.axis.empty() && spec.scheme == Scheme::PerTensor)
        throw UsageError(
            "--axis picks the axis the scales follow; --scheme per-tensor has one scale: leave it out");
}

} // namespace

void addSpecOptions(CLI::App& app, SpecOptions& o, bool withGroupSize) {
    app.add_option("--preset", o.preset, "Operator convention: " + joined(presetNames()))
        ->capture_default_str()
        ->group("SPEC");
    app.add_option("--scheme", o.scheme,
                   "per-tensor, per-channel, per-group, block or ragged (default per-channel)")
        ->group("SPEC");
    app.add_option("--axis", o.axis, "Axis (or comma list) whose indices get their own scale; default 0")
        ->group("SPEC");
    if (withGroupSize)
        app.add_option("--group-size", o.groupSize,
                       "Elements per group along --axis (per-group; default last axis)")
            ->check(CLI::Validator(
                [](std::string& v) {
                    std::int64_t n = 0;
                    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
                    return ec == std::errc() && p == v.data() + v.size() && n > 0
                               ? std::string()
                               : "must be a positive integer";
                },
                "POSITIVE"))
            ->group("SPEC");
    app.add_option(
           "--block", o.block,
           "Elements per block: N along --axis, or R,C per dimension (MX and NVFP4 fix their own: 32, 16)")
        ->group("SPEC");
    app.add_option("--group-index", o.groupIndex, "FILE:TENSOR with cumulative row ends (ragged groups)")
        ->group("SPEC");
    app.add_option("--dtype", o.dtype,
                   "int8, uint8, int4, uint4, int32, fp8-e4m3, fp8-e5m2, fp4-e2m1 (default int8)")
        ->group("SPEC");
    auto* sym = app.add_flag("--symmetric", o.symmetric, "No zero point (default)")->group("SPEC");
    auto* asym = app.add_flag("--asymmetric", o.asymmetric, "With a zero point")->group("SPEC");
    sym->excludes(asym);
    app.add_flag("--narrow-range", o.narrowRange, "Signed codes in [-127,127] instead of [-128,127]")
        ->group("SPEC");
    app.add_option("--round", o.round,
                   "half-even (alias round), half-away, floor, ceil, trunc (ascend-quant, custom)")
        ->group("SPEC");
    app.add_option("--calib", o.calib, "absmax (default), minmax, percentile=P, mse, entropy, file")
        ->group("SPEC");
    app.add_option("--scale", o.scale, "FILE:TENSOR holding the scales as the operator takes them")
        ->group("SPEC");
    app.add_option("--zero-point", o.zeroPoint, "FILE:TENSOR holding zero points (with --asymmetric)")
        ->group("SPEC");
    app.add_flag("--sqrt-mode", o.sqrtMode, "ascend-quant: apply the scale twice, (x*s)*s")->group("SPEC");
}

QuantSpec buildSpec(const SpecOptions& o) {
    QuantSpec spec;
    const auto preset = presetFromName(o.preset);
    if (!preset)
        throw UsageError("unknown --preset '" + o.preset + "'" + didYouMean(o.preset, presetNames()) +
                         " (choose " + joined(presetNames()) + ")");
    spec.preset = *preset;
    spec.target = parseTarget(o, spec.preset);
    spec.scheme = parseScheme(o, spec.preset);
    const bool blockFormat = isBlockFormat(spec.preset);
    const bool lastAxisDefault =
        blockFormat || spec.scheme == Scheme::PerGroup || spec.scheme == Scheme::Block;
    spec.axes.clear();
    if (!o.axis.empty())
        for (auto a : parseIntList(o.axis, "--axis")) {
            if (a < std::numeric_limits<int>::min() || a > std::numeric_limits<int>::max())
                throw UsageError("--axis " + std::to_string(a) + " is out of range for any tensor");
            spec.axes.push_back(static_cast<int>(a));
        }
    else if (!lastAxisDefault)
        spec.axes = {0};
    refuseOtherSchemesOptions(o, spec);
    if (o.groupSize > 0) spec.groupSize = o.groupSize;
    if (!o.block.empty()) spec.block = parseIntList(o.block, "--block");
    for (std::int64_t b : spec.block)
        if (b <= 0) throw UsageError("--block sizes must be positive, got '" + o.block + "'");
    if (!o.groupIndex.empty()) spec.groupEnds = loadGroupEnds(o.groupIndex);
    if (o.symmetric && !o.zeroPoint.empty())
        throw UsageError("--zero-point goes with --asymmetric; --symmetric has no zero point");
    spec.symmetric = !(o.asymmetric || !o.zeroPoint.empty());
    spec.narrowRange = o.narrowRange;
    if (!o.round.empty()) {
        spec.rounding = roundingFromName(o.round);
        if (!spec.rounding)
            throw UsageError("unknown --round '" + o.round +
                             "' (choose half-even, half-away, floor, ceil, trunc)");
    }
    spec.sqrtMode = o.sqrtMode;
    spec.calibration = parseCalib(o.calib);
    const bool explicitCalib = spec.calibration.method == CalibMethod::Explicit;
    if (!o.scale.empty() && !o.calib.empty() && !explicitCalib)
        throw UsageError("--scale gives the scales; it cannot be combined with --calib " + o.calib);
    if (explicitCalib && o.scale.empty()) throw UsageError("--calib file needs --scale FILE:TENSOR");
    if (!o.zeroPoint.empty() && o.scale.empty())
        throw UsageError("--zero-point needs --scale FILE:TENSOR as well");
    if (!o.scale.empty()) spec.calibration.method = CalibMethod::Explicit;
    return spec;
}

std::optional<QuantParams> loadExplicitParams(const SpecOptions& o) {
    if (o.scale.empty()) return std::nullopt;
    QuantParams p;
    p.scales = loadFileTensor(o.scale, "--scale");
    if (!o.zeroPoint.empty()) p.zeroPoints = loadFileTensor(o.zeroPoint, "--zero-point");
    return p;
}

std::vector<float> loadFileTensor(const std::string& arg, const char* flag) {
    const auto ref = parseTensorRef(arg);
    if (!ref) throw UsageError(std::string(flag) + " expects FILE:TENSOR, got '" + arg + "'");
    return loadTensorValues(*ref, flag);
}

} // namespace ql::cli
