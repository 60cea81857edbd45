#include "quant/spec_json.h"

#include "base/error.h"
#include "base/whole_number.h"
#include "quant/weight_view.h"

namespace ql {
namespace {

template <typename T, typename Parse> T parseName(const nlohmann::json& j, const char* key, Parse parse) {
    if (!j.contains(key)) throw QuantError(std::string("spec JSON: missing \"") + key + "\"");
    const auto name = j.at(key).get<std::string>();
    const auto v = parse(name);
    if (!v) throw QuantError(std::string("spec JSON: unknown ") + key + " \"" + name + "\"");
    return *v;
}

// An integer field, or a list of them: whole numbers within T's range only (a spec from a plan file
// or a session may hold 1e30 or 2.5 where a size is meant).
template <typename T> T wholeOf(const nlohmann::json& v, const char* key) {
    const auto n = wholeNumber<T>(v);
    if (!n)
        throw QuantError(std::string("spec JSON: \"") + key + "\" holds " + v.dump() +
                         ", not a whole number");
    return *n;
}

template <typename T> T wholeField(const nlohmann::json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    return it == j.end() ? fallback : wholeOf<T>(*it, key);
}

template <typename T> std::vector<T> wholeList(const nlohmann::json& j, const char* key) {
    std::vector<T> out;
    const auto it = j.find(key);
    if (it == j.end()) return out;
    if (!it->is_array()) throw QuantError(std::string("spec JSON: \"") + key + "\" is not a list");
    for (const auto& v : *it)
        out.push_back(wholeOf<T>(v, key));
    return out;
}

std::optional<CalibMethod> calibFromName(std::string_view n) {
    for (auto m : {CalibMethod::AbsMax, CalibMethod::MinMax, CalibMethod::Percentile, CalibMethod::Mse,
                   CalibMethod::Entropy, CalibMethod::Explicit})
        if (nameOf(m) == n) return m;
    return std::nullopt;
}

std::optional<ScaleOp> scaleOpFromName(std::string_view n) {
    for (auto o : {ScaleOp::Divide, ScaleOp::MultiplyReciprocal, ScaleOp::Multiply, ScaleOp::MultiplyTwice})
        if (nameOf(o) == n) return o;
    return std::nullopt;
}

std::string_view packingName(Packing p) {
    switch (p) {
    case Packing::None:
        return "none";
    case Packing::NibblesFlat:
        return "nibbles-low-first";
    case Packing::Int32Words:
        return "int32-words";
    }
    return "";
}

nlohmann::json conventionJson(const Convention& c) {
    return {{"scale_op", nameOf(c.scaleOp)},
            {"zero_point", nameOf(c.zeroPoint)},
            {"rounding", nameOf(c.rounding)},
            {"overflow", c.overflow == Overflow::Saturate ? "saturate" : "non-saturating"},
            {"nan", c.nan == NanPolicy::Zero ? "zero" : "x86-int-cast"},
            {"packing", packingName(c.packing)}};
}

} // namespace

nlohmann::json toJson(const QuantSpec& s) {
    nlohmann::json j = {{"preset", nameOf(s.preset)},
                        {"target", nameOf(s.target)},
                        {"scheme", nameOf(s.scheme)},
                        {"axes", s.axes},
                        {"symmetric", s.symmetric},
                        {"narrow_range", s.narrowRange},
                        {"calibration", nameOf(s.calibration.method)}};
    if (s.scheme == Scheme::PerGroup) j["group_size"] = s.groupSize;
    if (s.scheme == Scheme::Block) j["block"] = s.block;
    if (s.scheme == Scheme::Ragged) j["group_ends"] = s.groupEnds;
    if (s.calibration.method == CalibMethod::Percentile) j["percentile"] = s.calibration.percentile;
    if (s.rounding) j["rounding"] = nameOf(*s.rounding);
    if (s.sqrtMode) j["sqrt_mode"] = true;
    if (s.custom) j["convention"] = conventionJson(*s.custom);
    return j;
}

QuantSpec specFromJson(const nlohmann::json& j) {
    QuantSpec s;
    try {
        s.preset = parseName<Preset>(j, "preset", presetFromName);
        s.target = parseName<Target>(j, "target", targetFromName);
        s.scheme = parseName<Scheme>(j, "scheme", schemeFromName);
        s.axes = wholeList<int>(j, "axes");
        s.symmetric = j.value("symmetric", true);
        s.narrowRange = j.value("narrow_range", false);
        s.calibration.method = parseName<CalibMethod>(j, "calibration", calibFromName);
        s.calibration.percentile = j.value("percentile", 99.99);
        s.groupSize = wholeField<std::int64_t>(j, "group_size", 128);
        s.block = wholeList<std::int64_t>(j, "block");
        s.groupEnds = wholeList<std::int64_t>(j, "group_ends");
        s.sqrtMode = j.value("sqrt_mode", false);
        if (j.contains("rounding")) s.rounding = parseName<Rounding>(j, "rounding", roundingFromName);
        if (j.contains("convention")) {
            const auto& c = j.at("convention");
            Convention conv;
            conv.scaleOp = parseName<ScaleOp>(c, "scale_op", scaleOpFromName);
            conv.zeroPoint = c.value("zero_point", "after rounding") == "before rounding"
                                 ? ZeroPointStage::BeforeRounding
                                 : ZeroPointStage::AfterRounding;
            conv.rounding = parseName<Rounding>(c, "rounding", roundingFromName);
            conv.overflow =
                c.value("overflow", "saturate") == "saturate" ? Overflow::Saturate : Overflow::NonSaturating;
            s.custom = conv;
        }
    } catch (const nlohmann::json::exception& e) {
        throw QuantError(std::string("spec JSON: ") + e.what());
    }
    return s;
}

nlohmann::json toJson(const ResolvedSpec& plan) {
    nlohmann::json j = toJson(plan.spec);
    j["shape"] = plan.shape;
    if (plan.viewed()) j["tensor_shape"] = plan.tensorShape; // "shape" is its view (quant/weight_view.h)
    j["scale_shape"] = plan.scaleShape;
    j["code_dtype"] = nameOf(plan.codeTarget);
    j["resolved_convention"] = conventionJson(plan.convention);
    if (!plan.notes.empty()) j["notes"] = plan.notes;
    return j;
}

ResolvedSpec planFromJson(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("shape")) throw QuantError("spec JSON: the plan has no \"shape\"");
    const Shape shape = wholeList<std::int64_t>(j, "shape");
    if (!j.contains("tensor_shape")) return resolveSpec(specFromJson(j), shape);
    return resolveViewed(specFromJson(j), wholeList<std::int64_t>(j, "tensor_shape"), shape);
}

} // namespace ql
