#include "job/report_parts.h"

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/printable.h"
#include "io/tensor_source.h"
#include "io/untrusted_json.h"
#include "report/report_format.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace ql {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::uint64_t kMaxReportBytes = 4ULL << 30;
// A report nests {tensors: [{histograms: {values: {grid: [..]}}}]}: six levels; anything far deeper
// is not one of ours.
constexpr int kMaxReportDepth = 12;
// A report's tree in memory: a report of numbers takes about twice its text, so this covers every
// report up to 2 GB of text; a few bytes of crafted text ("{},") would otherwise cost a hundred.
constexpr std::uint64_t kMaxReportTreeBytes = 4ULL << 30;

constexpr std::size_t kListedShards = 20; // missing shards named in the message; the rest counted

// The first shards of `total`, "0, 1, ... (N in all)".
std::string listOf(const std::vector<std::int64_t>& first, std::uint64_t total) {
    std::string s;
    for (std::size_t i = 0; i < first.size() && i < kListedShards; ++i)
        s += (i ? ", " : "") + std::to_string(first[i]);
    if (total > first.size()) s += ", ... (" + std::to_string(total) + " in all)";
    return s;
}

// The fields every part must carry, with their types checked (a crafted part must not crash merge).
const json& shardOf(const std::string& path, const json& part) {
    auto bad = [&](const std::string& why) {
        return FileError(path + ": not a partial report (" + why + ")");
    };
    if (!part.is_object() || !part.contains("file") || !part["file"].is_string()) throw bad("no \"file\"");
    if (!part.contains("tensors") || !part["tensors"].is_array()) throw bad("no \"tensors\" list");
    if (!part.contains("shard") || !part["shard"].is_object())
        throw bad("no \"shard\": write the parts with quantize --shard I/N --report PART.json");
    const json& s = part["shard"];
    for (const char* key : {"index", "count", "selected"})
        if (!s.contains(key) || !s[key].is_number_integer() || s[key].get<std::int64_t>() < 0)
            throw bad(std::string("shard \"") + key + "\" is not a whole number");
    if (!s.contains("positions") || !s["positions"].is_array() ||
        s["positions"].size() != part["tensors"].size())
        throw bad("shard \"positions\" does not list one place per tensor");
    for (const auto& p : s["positions"])
        if (!p.is_number_integer()) throw bad("a shard position is not a whole number");
    for (const auto& t : part["tensors"])
        if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
            throw bad("a tensor entry has no name");
    return s;
}

} // namespace

json shardHeader(const std::string& file, const ShardSpec& shard, const std::vector<std::string>& selected,
                 const json& run) {
    return {{"file", file},
            {"shard",
             {{"index", shard.index},
              {"count", shard.count},
              {"selected", selected.size()},
              {"selection", selectionDigest(selected)},
              {"run", run}}}};
}

json partialReport(const json& header, const std::map<std::int64_t, json>& entries, const json& exported,
                   const json& extra) {
    json tensors = json::array(), positions = json::array();
    for (const auto& [position, entry] : entries) {
        positions.push_back(position);
        tensors.push_back(entry);
    }
    json shard = header["shard"];
    shard["positions"] = positions;
    if (!exported.is_null()) shard["export"] = exported;
    json part = extra.is_object() ? extra : json::object();
    part.update({{"file", header["file"]}, {"tensors", tensors}, {"shard", shard}});
    return part;
}

namespace {

// Every string a report or plan file holds is printed somewhere (names, errors, labels, notes): one
// carrying a control character (a message's newlines and tabs aside) could drive the terminal, so the
// file is refused, the string shown escaped. Depth is bounded by checkJsonShape before this runs.
void refuseControlText(const json& j, const std::string& path) {
    if (j.is_string()) {
        const auto& text = j.get_ref<const std::string&>();
        if (hasControlCharacter(text, true))
            throw FileError(path + ": \"" + printable(text) + "\" holds a control character; refused");
    } else if (j.is_array()) {
        for (const json& value : j)
            refuseControlText(value, path);
    } else if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            if (hasControlCharacter(key))
                throw FileError(path + ": a key holds a control character; refused");
            refuseControlText(value, path);
        }
    }
}

} // namespace

json readReportFile(const std::string& path) {
    const std::string s = readSmallFile(path, kMaxReportBytes, "a report");
    if (s.find('\0') != std::string::npos) throw FileError(path + ": holds a NUL byte: not a JSON text");
    checkJsonShape(s, path, "report", kMaxReportDepth, kMaxReportTreeBytes);
    json j = json::parse(s, nullptr, false);
    if (j.is_discarded()) throw FileError(path + ": not valid JSON");
    refuseControlText(j, path);
    // A report names its format's version (report_schema.md; version 1 had none): one written by a newer
    // QuantLens may mean its keys otherwise, so it is refused rather than misread.
    if (j.is_object() && j.contains("format_version")) {
        const json& v = j["format_version"];
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
            throw FileError(path + ": \"format_version\" is not a version number");
        if (v.get<std::int64_t>() > kReportFormatVersion)
            throw FileError(path + ": a report of format version " + std::to_string(v.get<std::int64_t>()) +
                            ", written by a newer QuantLens; this one reads versions up to " +
                            std::to_string(kReportFormatVersion));
    }
    return j;
}

MergedReport mergeReports(const std::vector<std::string>& paths, const std::vector<json>& parts) {
    if (parts.empty()) throw FileError("merge: no partial reports given");
    const json& first = shardOf(paths[0], parts[0]);
    const std::int64_t count = first["count"].get<std::int64_t>();
    const std::int64_t selected = first["selected"].get<std::int64_t>();
    std::map<std::int64_t, std::size_t> byShard; // shard index → part
    std::map<std::int64_t, const json*> byPosition;
    for (std::size_t p = 0; p < parts.size(); ++p) {
        const json& s = shardOf(paths[p], parts[p]);
        auto differs = [&](const std::string& what) {
            return FileError(paths[p] + ": from another run than " + paths[0] + " (" + what + " differs)");
        };
        if (parts[p]["file"] != parts[0]["file"]) throw differs("the model file");
        for (const auto& [key, value] : parts[p].items()) // what else a report names (diff: "file_b")
            if (key != "tensors" && key != "shard" && (!parts[0].contains(key) || parts[0][key] != value))
                throw differs("\"" + key + "\"");
        if (s["count"] != first["count"]) throw differs("the number of shards");
        if (s["selected"] != first["selected"] ||
            s.value("selection", json()) != first.value("selection", json()))
            throw differs("the tensor selection");
        if (s.value("run", json()) != first.value("run", json())) throw differs("the spec or backend");
        const std::int64_t index = s["index"].get<std::int64_t>();
        if (index >= count)
            throw FileError(paths[p] + ": shard " + std::to_string(index) + " of " + std::to_string(count));
        if (auto [it, fresh] = byShard.emplace(index, p); !fresh)
            throw FileError(paths[p] + ": shard " + std::to_string(index) + " is also in " +
                            paths[it->second]);
        const json& tensors = parts[p]["tensors"];
        for (std::size_t t = 0; t < tensors.size(); ++t) {
            const std::int64_t position = s["positions"][t].get<std::int64_t>();
            if (position < 0 || position >= selected)
                throw FileError(paths[p] + ": tensor '" + tensors[t]["name"].get<std::string>() +
                                "' has no place in the run");
            if (!byPosition.emplace(position, &tensors[t]).second)
                throw FileError(paths[p] + ": tensor '" + tensors[t]["name"].get<std::string>() +
                                "' is in two parts");
        }
    }
    // The count comes from a file: the missing shards are counted, and only the first few listed, so
    // the work follows the parts given, not the count they claim.
    if (const auto absent = static_cast<std::uint64_t>(count) - byShard.size(); absent > 0) {
        std::vector<std::int64_t> first;
        for (std::int64_t i = 0; i < count && first.size() < kListedShards; ++i)
            if (!byShard.count(i)) first.push_back(i);
        throw FileError("merge: shard" + std::string(absent > 1 ? "s " : " ") + listOf(first, absent) +
                        " of " + std::to_string(count) +
                        " missing (not given, or the task has not finished; the count is " + paths[0] +
                        "'s)");
    }
    if (static_cast<std::int64_t>(byPosition.size()) != selected)
        throw FileError(
            paths[0] + ": the parts hold " + std::to_string(byPosition.size()) + " of the " +
            std::to_string(selected) +
            " tensors this part says the run selected (a part was written before its task finished?)");

    MergedReport merged;
    json tensors = json::array();
    for (const auto& [position, entry] : byPosition)
        tensors.push_back(*entry);
    merged.report = parts[0];
    merged.report.erase("shard");
    merged.report["tensors"] = std::move(tensors);
    for (const auto& [index, p] : byShard) {
        const json& s = parts[p]["shard"];
        if (!s.contains("export")) continue; // a shard with nothing to write exported nothing
        json e = s["export"];
        if (e.is_object()) e["shard"] = index; // its file name carries the number
        merged.exports.push_back(std::move(e));
    }
    return merged;
}

ExportIndex exportIndexOf(const std::vector<json>& exports, std::int64_t shardCount) {
    ExportIndex out;
    const std::string suffix = ".safetensors.index.json";
    for (const auto& e : exports) {
        if (!e.is_object() || !e.contains("file") || !e["file"].is_string() || !e.contains("index") ||
            !e["index"].is_string())
            throw FileError("merge: a part's \"export\" names no file and index");
        const std::string file = e["file"].get<std::string>();
        const std::string index = e["index"].get<std::string>();
        if (out.path.empty()) out.path = index;
        if (index != out.path) throw FileError(file + ": exported for another index than " + out.path);
        const fs::path indexName = fs::path(index).filename();
        const std::string indexText = indexName.string();
        if (indexText.size() <= suffix.size() ||
            indexText.compare(indexText.size() - suffix.size(), suffix.size(), suffix) != 0)
            throw FileError(index + ": a part's export index must be a *" + suffix + " file; not written");
        // The names quantize --shard derives from --out: the index's stem, the shard's number, N.
        const std::string stem = indexText.substr(0, indexText.size() - suffix.size());
        char tail[64];
        const std::int64_t shard = e.value("shard", std::int64_t{-1});
        std::snprintf(tail, sizeof tail, "-%05lld-of-%05lld.safetensors", static_cast<long long>(shard) + 1,
                      static_cast<long long>(shardCount));
        if (fs::path(file).filename().string() != stem + tail ||
            fs::absolute(file).parent_path() != fs::absolute(index).parent_path())
            throw FileError(file + ": not the export quantize --shard writes beside " + index + " (" + stem +
                            tail +
                            "); the part was not written by this run's shards, so no index is written");
        out.files.push_back(file);
    }
    return out;
}

void writeExportIndex(const ExportIndex& index) {
    if (index.path.empty()) return;
    std::set<std::string> ours;
    for (const auto& file : index.files)
        ours.insert(fs::path(file).filename().string());
    std::error_code ec;
    if (fs::exists(index.path, ec)) { // a merge of the same run again may replace it; nothing else
        const json existing = readReportFile(index.path); // bounded, as every JSON QuantLens reads
        const json* map =
            existing.is_object() && existing.contains("weight_map") ? &existing["weight_map"] : nullptr;
        bool same = map && map->is_object();
        if (same)
            for (const auto& [name, shard] : map->items())
                same = same && shard.is_string() && ours.count(shard.get<std::string>());
        if (!same)
            throw FileError(index.path + ": a weight index that maps tensors to other files than this run's "
                                         "shards is already there (another model's); not written over");
    }
    json weightMap = json::object();
    std::uint64_t totalSize = 0;
    for (const auto& file : index.files) {
        const auto source = openTensorSource(file);
        const std::string shardName = fs::path(file).filename().string();
        for (const auto& t : source->tensors()) {
            if (weightMap.contains(t.name))
                throw FileError(file + ": tensor '" + t.name + "' is also in " +
                                weightMap[t.name].get<std::string>());
            weightMap[t.name] = shardName;
            totalSize += t.byteSize;
        }
    }
    const json out = {{"metadata", {{"total_size", totalSize}}}, {"weight_map", weightMap}};
    const std::string text = out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    AtomicFile file(index.path);
    file.write(text.data(), text.size());
    file.commit();
}

} // namespace ql
