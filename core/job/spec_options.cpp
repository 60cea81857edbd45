#include "job/spec_options.h"

#include "base/suggest.h"
#include "base/whole_number.h"
#include "io/tensor_source.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ql {
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
            throw SpecError(std::string(flag) + " expects integers separated by commas, got '" + text + "'");
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
            if (text[10] != '=') throw SpecError("--calib percentile takes its value as percentile=P");
            try {
                std::size_t used = 0;
                c.percentile = std::stod(text.substr(11), &used);
                if (used != text.size() - 11) throw std::invalid_argument(text);
            } catch (const std::exception&) {
                throw SpecError("--calib percentile=P needs a number, got '" + text.substr(11) + "'");
            }
            if (!(c.percentile > 0 && c.percentile <= 100))
                throw SpecError("--calib percentile=P needs 0 < P <= 100, got " + text.substr(11));
        }
    } else {
        throw SpecError("unknown --calib '" + text + "'" +
                        didYouMean(text, {"absmax", "minmax", "percentile", "mse", "entropy", "file"}) +
                        " (choose absmax, minmax, percentile=P, mse, entropy, file)");
    }
    return c;
}

Target parseTarget(const SpecOptions& o, Preset preset) {
    if (o.dtype.empty()) return presetInfo(preset).defaultTarget; // block formats have their own
    if (auto t = targetFromName(o.dtype)) return *t;
    throw SpecError(
        "unknown --dtype '" + o.dtype + "'" +
        didYouMean(o.dtype, {"int8", "uint8", "int4", "uint4", "int32", "fp8-e4m3", "fp8-e5m2", "fp4-e2m1"}) +
        " (choose int8, uint8, int4, uint4, int32, fp8-e4m3, fp8-e5m2, fp4-e2m1)");
}

bool groupIndexGiven(const SpecOptions& o) {
    return !o.groupIndex.empty() || o.groupEnds.has_value();
}
bool scaleGiven(const SpecOptions& o) {
    return !o.scale.empty() || o.scaleValues.has_value();
}
bool zeroPointGiven(const SpecOptions& o) {
    return !o.zeroPoint.empty() || o.zeroPointValues.has_value();
}

Scheme parseScheme(const SpecOptions& o, Preset preset) {
    if (!o.scheme.empty()) {
        if (auto s = schemeFromName(o.scheme)) return *s;
        throw SpecError("unknown --scheme '" + o.scheme + "'" +
                        didYouMean(o.scheme, {"per-tensor", "per-channel", "per-group", "block", "ragged"}) +
                        " (choose per-tensor, per-channel, per-group, block, ragged)");
    }
    if (groupIndexGiven(o)) return Scheme::Ragged;
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
    for (float v : loadSpecTensor(spec, "--group-index")) {
        // Checked before the conversion: a float beyond int64 (1e30, inf) has no integer value at all.
        const auto end = wholeNumber(v);
        if (!end) {
            char text[32];
            std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
            throw SpecError("--group-index " + spec + ": entry " + std::to_string(ends.size()) + " is " +
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
        throw SpecError(std::string(flag) + " sets the groups of --scheme " + std::string(nameOf(owner)) +
                        "; with " + scheme + " it would change nothing: leave it out");
    };
    if (!o.block.empty() && spec.scheme != Scheme::Block) refuse("--block", Scheme::Block);
    if (o.groupSize > 0 && spec.scheme != Scheme::PerGroup) refuse("--group-size", Scheme::PerGroup);
    if (groupIndexGiven(o) && spec.scheme != Scheme::Ragged) refuse("--group-index", Scheme::Ragged);
    if (!o.axis.empty() && spec.scheme == Scheme::PerTensor)
        throw SpecError(
            "--axis picks the axis the scales follow; --scheme per-tensor has one scale: leave it out");
}

std::vector<SpecField> makeSpecFields() {
    using O = SpecOptions;
    auto text = [](const char* flag, const char* keyword, std::string help, std::string O::*field) {
        return SpecField{flag, keyword, std::move(help), field, nullptr, nullptr};
    };
    auto on = [](const char* flag, const char* keyword, std::string help, bool O::*field) {
        return SpecField{flag, keyword, std::move(help), nullptr, nullptr, field};
    };
    return {
        text("--preset", "preset", "Operator convention: " + joined(presetNames()), &O::preset),
        text("--scheme", "scheme",
             "per-tensor, per-channel, per-group, block or ragged (default per-channel)", &O::scheme),
        text("--axis", "axis", "Axis (or comma list) whose indices get their own scale; default 0", &O::axis),
        SpecField{"--group-size", "group_size",
                  "Elements per group along --axis (per-group; default last axis)", nullptr, &O::groupSize,
                  nullptr},
        text("--block", "block",
             "Elements per block: N along --axis, or R,C per dimension (MX and NVFP4 fix their own: 32, 16)",
             &O::block),
        text("--group-index", "group_index", "FILE:TENSOR with cumulative row ends (ragged groups)",
             &O::groupIndex),
        text("--dtype", "dtype",
             "int8, uint8, int4, uint4, int32, fp8-e4m3, fp8-e5m2, fp4-e2m1 (default int8)", &O::dtype),
        on("--symmetric", "symmetric", "No zero point (default)", &O::symmetric),
        on("--asymmetric", "asymmetric", "With a zero point", &O::asymmetric),
        on("--narrow-range", "narrow_range", "Signed codes in [-127,127] instead of [-128,127]",
           &O::narrowRange),
        text("--round", "round",
             "half-even (alias round), half-away, floor, ceil, trunc (ascend-quant, custom)", &O::round),
        text("--calib", "calib", "absmax (default), minmax, percentile=P, mse, entropy, file", &O::calib),
        text("--scale", "scales", "FILE:TENSOR holding the scales as the operator takes them", &O::scale),
        text("--zero-point", "zero_points", "FILE:TENSOR holding zero points (with --asymmetric)",
             &O::zeroPoint),
        on("--sqrt-mode", "sqrt_mode", "ascend-quant: apply the scale twice, (x*s)*s", &O::sqrtMode),
    };
}

} // namespace

const std::vector<SpecField>& specFields() {
    static const std::vector<SpecField> fields = makeSpecFields();
    return fields;
}

const SpecField* specFieldOfKeyword(const std::string& keyword) {
    for (const SpecField& f : specFields())
        if (f.keyword == keyword) return &f;
    return nullptr;
}

QuantSpec specFromOptions(const SpecOptions& o) {
    QuantSpec spec;
    const auto preset = presetFromName(o.preset);
    if (!preset)
        throw SpecError("unknown --preset '" + o.preset + "'" + didYouMean(o.preset, presetNames()) +
                        " (choose " + joined(presetNames()) + ")");
    if (o.symmetric && o.asymmetric) throw SpecError("--symmetric excludes --asymmetric");
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
                throw SpecError("--axis " + std::to_string(a) + " is out of range for any tensor");
            spec.axes.push_back(static_cast<int>(a));
        }
    else if (!lastAxisDefault)
        spec.axes = {0};
    refuseOtherSchemesOptions(o, spec);
    if (o.groupSize > 0) spec.groupSize = o.groupSize;
    if (!o.block.empty()) spec.block = parseIntList(o.block, "--block");
    for (std::int64_t b : spec.block)
        if (b <= 0) throw SpecError("--block sizes must be positive, got '" + o.block + "'");
    if (o.groupEnds)
        spec.groupEnds = *o.groupEnds;
    else if (!o.groupIndex.empty())
        spec.groupEnds = loadGroupEnds(o.groupIndex);
    if (o.symmetric && zeroPointGiven(o))
        throw SpecError("--zero-point goes with --asymmetric; --symmetric has no zero point");
    spec.symmetric = !(o.asymmetric || zeroPointGiven(o));
    spec.narrowRange = o.narrowRange;
    if (!o.round.empty()) {
        spec.rounding = roundingFromName(o.round);
        if (!spec.rounding)
            throw SpecError("unknown --round '" + o.round + "'" +
                            didYouMean(o.round, {"half-even", "half-away", "floor", "ceil", "trunc"}) +
                            " (choose half-even, half-away, floor, ceil, trunc)");
    }
    spec.sqrtMode = o.sqrtMode;
    spec.calibration = parseCalib(o.calib);
    const bool explicitCalib = spec.calibration.method == CalibMethod::Explicit;
    if (scaleGiven(o) && !o.calib.empty() && !explicitCalib)
        throw SpecError("--scale gives the scales; it cannot be combined with --calib " + o.calib);
    if (explicitCalib && !scaleGiven(o)) throw SpecError("--calib file needs --scale FILE:TENSOR");
    if (zeroPointGiven(o) && !scaleGiven(o))
        throw SpecError("--zero-point needs --scale FILE:TENSOR as well");
    if (scaleGiven(o)) spec.calibration.method = CalibMethod::Explicit;
    return spec;
}

std::optional<QuantParams> explicitParamsOf(const SpecOptions& o) {
    if (!scaleGiven(o)) return std::nullopt;
    QuantParams p;
    p.scales = o.scaleValues ? *o.scaleValues : loadSpecTensor(o.scale, "--scale");
    if (o.zeroPointValues)
        p.zeroPoints = *o.zeroPointValues;
    else if (!o.zeroPoint.empty())
        p.zeroPoints = loadSpecTensor(o.zeroPoint, "--zero-point");
    return p;
}

std::vector<float> loadSpecTensor(const std::string& arg, const char* flag) {
    const auto ref = parseTensorRef(arg);
    if (!ref) throw SpecError(std::string(flag) + " expects FILE:TENSOR, got '" + arg + "'");
    return loadTensorValues(*ref, flag);
}

} // namespace ql
