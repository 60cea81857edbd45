#include "job/plan_output.h"

#include "base/error.h"
#include "base/whole_number.h"
#include "io/export_compressed_tensors.h"
#include "io/printable.h"
#include "job/plan_names.h"
#include "job/tensor_diff.h"
#include "job/tensor_measurement.h"
#include "quant/spec_json.h"
#include "report/report.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace ql {
namespace {

using json = nlohmann::json;

// 2^48 elements: no model comes near, and 64 bits each still sum without overflow.
constexpr std::int64_t kMaxPlanElements = std::int64_t{1} << 48;

const PlanCandidate& chosen(const PlanMeasurements& m, const PlanResult& r, std::size_t t) {
    return m.candidates[static_cast<std::size_t>(r.solution.choice[t])];
}

// The module a compressed-tensors checkpoint stores the weight under (its stored name less ".weight").
std::string moduleOf(const std::string& weight) {
    const std::string stored = compressedTensorsName(weight);
    return stored.substr(0, stored.size() - std::string(".weight").size());
}

// The spec the plan quantizes `info` with under `c`: the role's axes read from the file as measured.
ResolvedSpec chosenLayout(const TensorSource& source, const TensorInfo& info, const PlanCandidate& c) {
    return planOfCandidate(c, roleOf(source, info), info.shape);
}

double readNumber(const json& v) {
    return v.is_null() ? NAN : v.get<double>();
}

// A whole number of a plan file: 1e30 or 2.5 where a count is meant is refused, never converted.
template <class T = std::int64_t> T readWhole(const json& v, const std::string& what) {
    const auto n = wholeNumber<T>(v);
    if (!n) throw QuantError(what + " is " + v.dump() + ", not a whole number");
    return *n;
}

} // namespace

json planJson(const PlanMeasurements& m, const PlanResult& r) {
    json candidates = json::array();
    for (const auto& c : m.candidates)
        candidates.push_back({{"name", c.name},
                              {"spec", c.spec ? toJson(*c.spec) : json()},
                              {"ggml_type", c.ggmlType},
                              {"ggml_same_layout", c.ggmlSameLayout},
                              {"role_axes", c.roleAxes}});
    json tensors = json::array(), choice = json::array();
    for (std::size_t t = 0; t < m.tensors.size(); ++t) {
        const PlanTensor& pt = m.tensors[t];
        json cells = json::array();
        for (const auto& c : pt.cells) {
            json cell = {{"bits", c.bits}, {"error", jsonNumber(c.error)}, {"sqnr_db", jsonNumber(c.sqnrDb)}};
            if (!c.why.empty()) cell["why"] = c.why;
            if (!c.compressedTensors.is_null()) cell["compressed_tensors"] = c.compressedTensors;
            if (!c.noCompressedTensors.empty()) cell["no_compressed_tensors"] = c.noCompressedTensors;
            cells.push_back(std::move(cell));
        }
        tensors.push_back({{"name", pt.name},
                           {"shape", pt.shape},
                           {"dtype", std::string(nameOf(pt.dtype))},
                           {"role", pt.role},
                           {"weighted", pt.weighted},
                           {"note", pt.note},
                           {"cells", std::move(cells)}});
        const auto k = static_cast<std::size_t>(r.solution.choice[t]);
        choice.push_back({{"name", pt.name},
                          {"candidate", m.candidates[k].name},
                          {"bits", pt.cells[k].bits},
                          {"error", jsonNumber(pt.cells[k].error)}});
    }
    json notPlanned = json::array();
    for (const auto& [name, why] : m.notPlanned)
        notPlanned.push_back({{"name", name}, {"why", why}});
    json front = json::array();
    const double n = static_cast<double>(m.elements());
    for (const auto& p : r.front)
        front.push_back(
            {{"bits", p.bits}, {"bits_per_weight", static_cast<double>(p.bits) / n}, {"error", p.error}});
    return {{"format", "quantlens-plan"},
            {"version", 1},
            {"file", m.file},
            {"importance", m.importance},
            {"objective", !m.outputObjective.empty() ? m.outputObjective
                          : m.importance.empty()     ? "sum of squared errors"
                                                     : "sum of importance-weighted squared errors"},
            {"output_objective", !m.outputObjective.empty()},
            {"candidates", std::move(candidates)},
            {"tensors", std::move(tensors)},
            {"not_planned", std::move(notPlanned)},
            {"budget_bits", r.budgetBits},
            {"unit_bits", r.solution.unitBits},
            {"exact", r.solution.exact},
            {"bits", r.solution.bits},
            {"bits_per_weight", r.bitsPerWeight(m)},
            {"error", r.solution.error},
            {"choice", std::move(choice)},
            {"front", std::move(front)}};
}

PlanMeasurements planMeasurementsFromJson(const json& j, const std::string& path) {
    auto bad = [&](const std::string& why) { return FileError(path + ": not a QuantLens plan: " + why); };
    PlanMeasurements m;
    std::int64_t total = 0;
    try {
        if (!j.is_object() || j.value("format", std::string()) != "quantlens-plan")
            throw bad("no \"format\": \"quantlens-plan\"");
        if (wholeNumber<int>(j.at("version")) != 1)
            throw bad("version " + j.at("version").dump() + " is not 1");
        m.file = j.at("file").get<std::string>();
        m.importance = j.at("importance").get<std::string>();
        if (j.value("output_objective", false)) m.outputObjective = j.at("objective").get<std::string>();
        std::set<std::string> names; // each candidate, and each tensor, once: a second is ambiguous
        for (const auto& c : j.at("candidates")) {
            PlanCandidate pc{c.at("name").get<std::string>(), std::nullopt,
                             c.at("ggml_type").get<std::string>(), c.value("ggml_same_layout", false),
                             c.value("role_axes", true)};
            if (!names.insert(pc.name).second) throw bad("the candidate '" + pc.name + "' is listed twice");
            if (!c.at("spec").is_null()) pc.spec = specFromJson(c.at("spec"));
            m.candidates.push_back(std::move(pc));
        }
        if (m.candidates.empty()) throw bad("no candidates");
        names.clear();
        for (const auto& t : j.at("tensors")) {
            PlanTensor pt;
            pt.name = t.at("name").get<std::string>();
            if (!names.insert(pt.name).second) throw bad("the tensor '" + pt.name + "' is listed twice");
            if (!t.at("shape").is_array()) throw bad("tensor '" + pt.name + "' has no shape list");
            for (const auto& d : t.at("shape"))
                pt.shape.push_back(readWhole(d, "tensor '" + pt.name + "': a dimension"));
            const auto dtype = dtypeFromName(t.at("dtype").get<std::string>());
            if (!dtype) throw bad("tensor '" + pt.name + "' has an unknown dtype");
            pt.dtype = *dtype;
            // Sizes a crafted file could make overflow the solver's sums: every dimension positive,
            // the model's elements and each cell's bits bounded.
            pt.elements = 1;
            for (const std::int64_t d : pt.shape) {
                if (d <= 0 || d > kMaxPlanElements / pt.elements)
                    throw bad("tensor '" + pt.name + "' has the shape " + toString(pt.shape));
                pt.elements *= d;
            }
            if (pt.shape.empty() || (total += pt.elements) > kMaxPlanElements)
                throw bad("tensor '" + pt.name + "': more elements than a plan holds");
            pt.role = t.value("role", std::string());
            pt.weighted = t.at("weighted").get<bool>();
            pt.note = t.at("note").get<std::string>();
            const json& cells = t.at("cells");
            if (!cells.is_array() || cells.size() != m.candidates.size())
                throw bad("tensor '" + pt.name + "' has " +
                          (cells.is_array() ? std::to_string(cells.size()) : "no") + " cells for " +
                          std::to_string(m.candidates.size()) + " candidates");
            for (const auto& c : cells) {
                const PlanCandidate& candidate = m.candidates[pt.cells.size()];
                PlanCell cell;
                cell.bits = readWhole(c.at("bits"), "tensor '" + pt.name + "': bits");
                cell.error = readNumber(c.at("error"));
                cell.sqnrDb = readNumber(c.at("sqnr_db"));
                if (cell.bits >= 0 && cell.error == 0 && std::isnan(cell.sqnrDb)) cell.sqnrDb = INFINITY;
                cell.why = c.value("why", std::string());
                cell.compressedTensors = c.value("compressed_tensors", json());
                cell.noCompressedTensors = c.value("no_compressed_tensors", std::string());
                if (cell.bits < -1 || cell.bits > 64 * pt.elements)
                    throw bad("tensor '" + pt.name + "' stores " + std::to_string(cell.bits) + " bits");
                if (cell.bits >= 0 && !(cell.error >= 0))
                    throw bad("tensor '" + pt.name + "' has an invalid error");
                // The recipe groups a chosen format's weights by its compressed-tensors arguments: a
                // measured cell of a quantizing candidate has them, as measurePlan writes them, or
                // says why compressed-tensors cannot store it.
                const json& ct = cell.compressedTensors;
                if (cell.bits >= 0 && candidate.spec && cell.noCompressedTensors.empty() &&
                    !(ct.is_object() && ct.contains("format") && ct["format"].is_string() &&
                      ct.contains("weights") && ct["weights"].is_object()))
                    throw bad("tensor '" + pt.name + "', candidate '" + candidate.name +
                              "': no compressed-tensors arguments (\"compressed_tensors\": {\"format\", "
                              "\"weights\"}, or \"no_compressed_tensors\": why)");
                pt.cells.push_back(std::move(cell));
            }
            m.tensors.push_back(std::move(pt));
        }
        for (const auto& n : j.at("not_planned"))
            m.notPlanned.emplace_back(n.at("name").get<std::string>(), n.at("why").get<std::string>());
    } catch (const json::exception& e) {
        throw bad(e.what());
    } catch (const QuantError& e) {
        throw bad(e.what());
    }
    if (m.tensors.empty()) throw bad("no tensors");
    return m;
}

std::vector<std::string> planNotes(const PlanMeasurements& m, const std::string& file) {
    std::vector<std::string> notes;
    for (const auto& t : m.tensors)
        if (!m.importance.empty() && !t.weighted)
            notes.push_back(file + ": tensor '" + printable(t.name) + "': " + t.note);
    for (std::size_t k = 0; k < m.candidates.size(); ++k) { // a candidate no tensor could take is said once
        std::string why;
        bool any = false;
        for (const auto& t : m.tensors) {
            if (t.cells[k].bits >= 0)
                any = true;
            else if (why.empty())
                why = t.name + ": " + t.cells[k].why;
        }
        if (!any)
            notes.push_back(file + ": candidate " + m.candidates[k].name + " fits no weight (" + why + ")");
    }
    return notes;
}

PlanText llamaTensorTypeRules(const PlanMeasurements& m, const PlanResult& r) {
    PlanText out;
    std::set<std::string> approximated;
    for (std::size_t t = 0; t < m.tensors.size(); ++t) {
        const PlanTensor& pt = m.tensors[t];
        const PlanCandidate& c = chosen(m, r, t);
        std::string name = ggufNameOf(pt.name);
        if (name.empty()) {
            name = pt.name;
            if (name.rfind("blk.", 0) != 0 && name.rfind("token_embd", 0) != 0 &&
                name.rfind("output", 0) != 0)
                out.notes.push_back("'" + printable(pt.name) +
                                    "' has no llama.cpp name: its rule uses the name as it is");
        }
        // Each rule matches its tensor and no other, and its type is one llama-quantize knows (the
        // type may come from a plan file): otherwise no rule, and the reason.
        const std::string type = c.spec ? c.ggmlType : std::string(nameOf(pt.dtype));
        std::string why;
        const std::optional<std::string> pattern = llamaRulePattern(name, why);
        if (!pattern) {
            out.notes.push_back("'" + printable(name) + "': no rule (" + why + ")");
            continue;
        }
        if (!isGgmlTypeName(type)) {
            out.notes.push_back("'" + printable(name) + "': no rule ('" + printable(type) +
                                "' is not a ggml type llama-quantize takes)");
            continue;
        }
        out.text += *pattern + "=" + type + "\n";
        if (c.spec) approximated.insert(std::string(c.ggmlSameLayout ? "=" : "~") + c.name + " " + type);
    }
    for (const auto& a : approximated) {
        const std::string name = a.substr(1, a.find(' ') - 1), type = a.substr(a.find(' ') + 1);
        out.notes.push_back(a[0] == '=' ? name + " is written as llama.cpp's " + type +
                                              ": the same layout, rounded by llama.cpp's own quantizer"
                                        : "llama.cpp has no type with the arithmetic of " + name +
                                              "; its rules name the nearest, " + type +
                                              " (the same code width, blocks no coarser)");
    }
    return out;
}

PlanText llmCompressorRecipe(const PlanMeasurements& m, const PlanResult& r) {
    // One config group per distinct (format, weights), in the order first chosen.
    std::vector<std::pair<json, std::vector<std::string>>> groups;
    std::vector<std::string> ignore;
    std::vector<std::string> notes;
    for (std::size_t t = 0; t < m.tensors.size(); ++t) {
        const PlanCell& cell = m.tensors[t].cells[static_cast<std::size_t>(r.solution.choice[t])];
        const std::string module = moduleOf(m.tensors[t].name);
        if (!chosen(m, r, t).spec) {
            ignore.push_back(module);
            continue;
        }
        if (!cell.noCompressedTensors.empty()) {
            ignore.push_back(module);
            notes.push_back("'" + printable(m.tensors[t].name) + "' is kept (ignored) in the recipe: its " +
                            chosen(m, r, t).name + " has no compressed-tensors layout (" +
                            cell.noCompressedTensors + ")");
            continue;
        }
        const json& weights = cell.compressedTensors.at("weights");
        auto it =
            std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == weights; });
        if (it == groups.end())
            it = groups.insert(groups.end(), std::make_pair(weights, std::vector<std::string>{}));
        it->second.push_back(module);
    }
    // YAML, all ASCII: names as double-quoted scalars with every other code point escaped (a
    // U+2028 in a name would end a comment or a line), arguments as JSON flow mappings with \u
    // escapes. Each module is a target that selects it alone (compressorTarget).
    const auto list = [&](const std::vector<std::string>& modules) {
        std::string s;
        for (const std::string& module : modules) {
            if (const auto quoted = yamlQuoted(compressorTarget(module)))
                s += (s.empty() ? "" : ", ") + *quoted;
            else
                notes.push_back(
                    "module '" + printable(module) +
                    "' is left out of the recipe: its name is not UTF-8, so no YAML string names it");
        }
        return "[" + s + "]";
    };
    const std::string file = yamlQuoted(m.file).value_or("\"" + printable(m.file) + "\"");
    std::string y =
        "# QuantLens plan for " + file + ": " + std::to_string(r.bitsPerWeight(m)) + " bits per weight.\n";
    y += "quant_stage:\n  quant_modifiers:\n    QuantizationModifier:\n";
    y += "      ignore: " + list(ignore) + "\n";
    y += "      config_groups:\n";
    if (groups.empty()) y.replace(y.size() - 1, 1, " {}\n");
    for (std::size_t g = 0; g < groups.size(); ++g) {
        y += "        group_" + std::to_string(g) + ":\n";
        y += "          targets: " + list(groups[g].second) + "\n";
        y += "          weights: " + groups[g].first.dump(-1, ' ', true, json::error_handler_t::replace) +
             "\n";
    }
    return {y, notes};
}

void checkPlanFits(const TensorSource& source, const PlanMeasurements& m, const PlanResult& r) {
    for (std::size_t t = 0; t < m.tensors.size(); ++t) {
        const PlanTensor& pt = m.tensors[t];
        const TensorInfo* info = source.find(pt.name);
        if (!info) throw FileError(whereIn(source, pt.name, "the plan names it and the file lacks it"));
        if (info->shape != pt.shape)
            throw FileError(
                whereIn(source, pt.name,
                        "its shape " + toString(info->shape) + " is not the plan's " + toString(pt.shape)));
        const PlanCandidate& c = chosen(m, r, t);
        if (!c.spec) continue;
        const PlanCell& cell = pt.cells[static_cast<std::size_t>(r.solution.choice[t])];
        if (!cell.noCompressedTensors.empty())
            throw QuantError(whereIn(source, pt.name,
                                     c.name + " has no compressed-tensors layout here (" +
                                         cell.noCompressedTensors +
                                         "); plan with the export asked for (--out) to choose among "
                                         "the formats a checkpoint stores"));
        try {
            (void)chosenLayout(source, *info, c); // the layout alone: no value is read
        } catch (const QuantError& e) {
            throw QuantError(whereIn(source, pt.name, c.name + ": " + e.what()));
        }
    }
}

int exportPlan(const JobRequest& request, const PlanMeasurements& m, const PlanResult& r,
               const std::string& path, const ModelEvents& events) {
    const TensorSource& source = *request.source;
    refuseOutputsOverInputs(request, {{path, "--out"}});
    (void)checkConfigTarget(path, source.path()); // before any tensor is quantized
    checkPlanFits(source, m, r);
    const Backend& backend = request.registry->require(request.backend);
    std::map<std::string, std::size_t> planned;
    for (std::size_t t = 0; t < m.tensors.size(); ++t)
        planned[m.tensors[t].name] = t;
    std::vector<QuantizedTensor> quantized;
    ExportExtras extras;
    const int total = static_cast<int>(source.tensors().size());
    int index = 0;
    for (const TensorInfo& info : source.tensors()) {
        if (events.started) events.started(index++, total, info.name);
        const auto it = planned.find(info.name);
        const PlanCandidate* c = it == planned.end() ? nullptr : &chosen(m, r, it->second);
        if (!c || !c->spec) {
            extras.kept.push_back({info.name, source.load(info.name)});
            continue;
        }
        try {
            const LoadedTensor tensor(source, info);
            // (codes are what it keeps: no clipping rows)
            TensorMeasurement run = measureTensor(tensor, chosenLayout(source, info, *c), backend,
                                                  {.progress = events.progress, .groupRows = 0});
            quantized.push_back(
                {info.name, run.result.plan, std::move(run.result.params), std::move(run.result.codes)});
        } catch (const QuantError& e) {
            throw QuantError(whereIn(source, info.name, c->name + ": " + e.what()));
        }
    }
    const CompressedTensorsConfig config = compressedTensorsConfig(path, quantized, extras, source.path());
    exportSafetensors(path, quantized, ExportLayout::CompressedTensors, source.path(), extras);
    writeCompressedTensorsConfig(config);
    return static_cast<int>(quantized.size());
}

} // namespace ql
