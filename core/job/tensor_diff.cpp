#include "job/tensor_diff.h"

#include "base/error.h"
#include "io/export_reader.h"
#include "io/gguf_source.h"
#include "io/llama_rows.h"
#include "io/stored_quantization.h"
#include "job/job.h"
#include "job/tensor_measurement.h"
#include "quant/reference.h"
#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <string_view>

namespace ql {
namespace {

using nlohmann::json;

// Hugging Face llama-family module names and llama.cpp's GGUF names for them (its converter's
// tensor map), per layer and model-wide.
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
    {"input_layernorm", "attn_norm"},
    {"post_attention_layernorm", "ffn_norm"},
};
constexpr std::pair<const char*, const char*> kModelNames[] = {
    {"model.embed_tokens", "token_embd"},
    {"model.norm", "output_norm"},
    {"lm_head", "output"},
};

bool startsWith(const std::string& s, const std::string& p) {
    return s.compare(0, p.size(), p) == 0;
}

// onnxruntime's QDQ quantizer (onnxruntime/python/tools/quantization: quant_utils.py's
// DEQUANT_OUTPUT_SUFFIX, used by qdq_quantizer.py) names the DequantizeLinear output of weight W
// "W_DequantizeLinear_Output", beside W_quantized, W_scale and W_zero_point. (Older versions kept the
// name W itself, which matches exactly.)
constexpr std::string_view kDequantOutput = "_DequantizeLinear_Output";

// W for "W_DequantizeLinear_Output"; empty otherwise.
std::string qdqWeightName(const std::string& name) {
    if (name.size() <= kDequantOutput.size() ||
        name.compare(name.size() - kDequantOutput.size(), kDequantOutput.size(), kDequantOutput) != 0)
        return {};
    return name.substr(0, name.size() - kDequantOutput.size());
}

// compressed-tensors' pack-quantized formats store weight W's codes as "W_packed"
// (export_compressed_tensors.cpp); 8-bit ones keep the name W.
constexpr std::string_view kPacked = "_packed";

// W for "W_packed" (W a ".weight"); empty otherwise.
std::string packedWeightName(const std::string& name) {
    std::string stem = name.size() > kPacked.size() ? name.substr(0, name.size() - kPacked.size()) : "";
    if (stem.empty() || name.compare(stem.size(), std::string::npos, kPacked) != 0 || stem.size() < 7 ||
        stem.compare(stem.size() - 7, 7, ".weight") != 0)
        return {};
    return stem;
}

// Bits of an f32, bf16 or f16 value as an integer that orders like the value (-0 and +0 adjacent).
std::int64_t orderedBits(std::uint32_t bits, int width) {
    const std::uint32_t sign = 1u << (width - 1);
    const std::uint32_t magnitude = bits & (sign - 1);
    return (bits & sign) ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
}

std::uint32_t rawBits(const ValuesView& v, std::int64_t i) {
    if (v.dtype == DType::F32) {
        std::uint32_t u;
        std::memcpy(&u, v.data + 4 * i, 4);
        return u;
    }
    std::uint16_t h;
    std::memcpy(&h, v.data + 2 * i, 2);
    return h;
}

std::uint32_t f32Bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

void addNote(std::string& note, const std::string& more) {
    if (!more.empty()) note += (note.empty() ? "" : "; ") + more;
}

// Whether x and y, one of them NaN/Inf at least, are the same: the same bits when both sides share a
// format, otherwise both NaN or the same infinity.
bool sameNonFinite(float x, float y, std::uint32_t bx, std::uint32_t by, bool sameFormat) {
    if (sameFormat) return bx == by;
    return (std::isnan(x) && std::isnan(y)) || x == y;
}

// What the figures leave out, in words; empty when neither side holds NaN/Inf.
std::string nonFiniteNote(const TensorDiff& d) {
    if (d.nonFiniteA == 0 && d.nonFiniteB == 0) return {};
    const std::string counts =
        "NaN/Inf: " + std::to_string(d.nonFiniteA) + " in A, " + std::to_string(d.nonFiniteB) + " in B";
    if (d.nonFiniteMismatches == 0)
        return counts + ", the same on both sides and left out of SQNR, max |A-B|, cosine and ULPs";
    return counts + ", " + std::to_string(d.nonFiniteMismatches) +
           (d.nonFiniteMismatches == 1 ? " value" : " values") +
           " not the same on both sides (NaN/Inf on one side only, or another NaN/Inf): not bit-identical; "
           "SQNR, max |A-B|, cosine and ULPs leave them out";
}

// For each row of A, B's row holding the same weights: the identity (empty) except for q and k of a
// llama-family GGUF on one side, whose converter reordered them (io/llama_rows.h).
std::vector<std::int64_t> rowsOfB(const TensorSource& a, const TensorSource& b, const TensorPair& pair,
                                  const Shape& shape, std::string& note) {
    if (pair.how != "gguf" || shape.empty()) return {};
    std::optional<LlamaRows> converted = b.convertedRows(pair.b, shape[0]);
    const bool ofB = converted.has_value();
    if (!ofB) converted = a.convertedRows(pair.a, shape[0]);
    if (!converted) {
        const bool qk =
            pair.a.find(".attn_q.") != std::string::npos || pair.a.find(".attn_k.") != std::string::npos;
        if (qk)
            addNote(note, "llama.cpp's converter reorders the rows of q and k for its rotary layout; neither "
                          "file is a GGUF with head counts, so rows are compared as stored");
        return {};
    }
    LlamaRows& rows = *converted;
    addNote(note, rows.note);
    if (ofB || rows.ggufRowOf.empty()) return std::move(rows.ggufRowOf);
    std::vector<std::int64_t> hfRowOf(rows.ggufRowOf.size()); // A is the GGUF: the inverse order
    for (std::size_t r = 0; r < rows.ggufRowOf.size(); ++r)
        hfRowOf[static_cast<std::size_t>(rows.ggufRowOf[r])] = static_cast<std::int64_t>(r);
    return hfRowOf;
}

// A's tensor quantized with the request's spec through the job pipeline.
QuantizedTensor requantizedTensor(const TensorSource& a, const TensorPair& pair,
                                  const JobRequest& requantize) {
    JobRequest r = requantize;
    r.compare = {};         // only A's codes are wanted: no second run
    r.importance = nullptr; // nor a weighted error
    r.codesOnly = true;     // nor statistics
    if (!r.source) r.source = std::shared_ptr<const TensorSource>(std::shared_ptr<void>(), &a);
    TensorOutcome out = runTensorJob(r, pair.a);
    return {pair.a, out.a.report.plan, out.a.report.params, std::move(out.a.codes)};
}

// The same in stored terms.
std::optional<StoredQuantization> requantized(const TensorSource& a, const TensorPair& pair,
                                              const JobRequest& requantize, std::string& why) {
    try {
        const QuantizedTensor q = requantizedTensor(a, pair, requantize);
        return storedQuantizationOf(q.plan, q.params, q.codes);
    } catch (const QuantError& e) {
        why = "codes not compared: re-quantizing A: " + std::string(e.what());
    } catch (const FileError& e) {
        why = "codes not compared: re-quantizing A: " + std::string(e.what());
    }
    return std::nullopt;
}

// The code comparison, or a note why there is none.
void compareStoredCodes(const std::optional<StoredQuantization>& qa, const std::string& whyA,
                        const std::optional<StoredQuantization>& qb, const std::string& whyB,
                        const TensorPair& pair, const std::vector<std::int64_t>& bRows, bool requantizing,
                        TensorDiff& d) {
    if (!qa || !qb) {
        addNote(d.note, whyA);
        addNote(d.note, whyB);
        if (requantizing && !qb && whyB.empty())
            addNote(d.note, "codes not compared: " + pair.b + " is not stored quantized in B");
        return;
    }
    try {
        d.codes = compareCodes(*qa, bRows.empty() ? *qb : qb->withRows(bRows));
    } catch (const QuantError& e) {
        addNote(d.note, e.what());
    }
}

// A QuantLens export's entry for `name`; nullptr when it has none.
const ExportedEntry* entryNamed(const std::vector<ExportedEntry>& entries, const std::string& name) {
    const auto it =
        std::find_if(entries.begin(), entries.end(), [&](const ExportedEntry& e) { return e.name == name; });
    return it == entries.end() ? nullptr : &*it;
}

// Order-preserving integer of a float code's bits (sign-magnitude, `width` bits), so that neighbouring
// minifloat values are one apart; integer codes are their values.
std::int64_t orderedCode(std::int32_t code, Target t) {
    if (!isFloatTarget(t)) return code;
    const int width = t == Target::Fp4E2M1 ? 4 : 8;
    const std::uint32_t sign = 1u << (width - 1);
    const auto bits = static_cast<std::uint32_t>(code) & ((sign << 1) - 1);
    const auto magnitude = static_cast<std::int64_t>(bits & (sign - 1));
    return (bits & sign) ? -magnitude : magnitude;
}

bool sameBits(float x, float y) {
    return f32Bits(x) == f32Bits(y);
}

std::string exportFormat(const QuantizedTensor& q, const ExportedEntry& e) {
    const std::string layout =
        e.group.empty() ? e.description.value("format", std::string("native")) : std::string("hdf5");
    return "quantlens export " + layout + " " + std::string(nameOf(q.plan.spec.preset)) + " " +
           std::string(nameOf(q.plan.codeTarget)) + " " + std::string(nameOf(q.plan.spec.scheme));
}

// A re-quantization's codes and parameters against an export's, whatever the grid (integer or float
// codes, steps or inverse steps, integer or float zero points): they are one plan's, or say why not.
CodeDiff compareExported(const QuantizedTensor& a, const QuantizedTensor& b, const std::string& formatB) {
    if (a.plan.codeTarget != b.plan.codeTarget || a.plan.shape != b.plan.shape ||
        a.plan.scaleShape != b.plan.scaleShape)
        throw QuantError("codes not compared: the re-quantization's plan (" +
                         std::string(nameOf(a.plan.codeTarget)) + " " + toString(a.plan.shape) + ", scales " +
                         toString(a.plan.scaleShape) + ") is not the export's (" +
                         std::string(nameOf(b.plan.codeTarget)) + " " + toString(b.plan.shape) + ", scales " +
                         toString(b.plan.scaleShape) + ")");
    CodeDiff d;
    d.formatA = "quantlens " + std::string(nameOf(a.plan.spec.preset)) + " " +
                std::string(nameOf(a.plan.codeTarget)) + " " + std::string(nameOf(a.plan.spec.scheme));
    d.formatB = formatB;
    d.compared = a.codes.size();
    for (std::int64_t i = 0; i < a.codes.size(); ++i) {
        const std::int64_t x = orderedCode(a.codes.at(i), a.plan.codeTarget);
        const std::int64_t y = orderedCode(b.codes.at(i), b.plan.codeTarget);
        if (x == y) continue;
        if (d.firstMismatch < 0) d.firstMismatch = i;
        ++d.mismatches;
        d.maxDelta = std::max(d.maxDelta, std::abs(x - y));
    }
    d.scales = static_cast<std::int64_t>(a.params.scales.size());
    for (std::size_t g = 0; g < a.params.scales.size() && g < b.params.scales.size(); ++g) {
        d.scaleMismatches += !sameBits(a.params.scales[g], b.params.scales[g]);
        d.zeroPointMismatches += !sameBits(a.params.zeroPointOf(static_cast<std::int64_t>(g)),
                                           b.params.zeroPointOf(static_cast<std::int64_t>(g)));
    }
    return d;
}

// A compressed-tensors codes tensor is not the weight: its values are the dequantization.
bool readAsDequantized(const std::optional<StoredQuantization>& q) {
    return q && q->format.rfind("compressed-tensors", 0) == 0;
}

} // namespace

std::string ggufNameOf(const std::string& hf) {
    std::string stem = hf, suffix;
    for (const char* s : {".weight", ".bias"})
        if (hf.size() > std::strlen(s) && hf.compare(hf.size() - std::strlen(s), std::string::npos, s) == 0) {
            stem = hf.substr(0, hf.size() - std::strlen(s));
            suffix = s;
        }
    if (suffix.empty()) return {};
    for (const auto& [from, to] : kModelNames)
        if (stem == from) return std::string(to) + suffix;
    const std::string layers = "model.layers.";
    if (!startsWith(stem, layers)) return {};
    const std::size_t dot = stem.find('.', layers.size());
    if (dot == std::string::npos) return {};
    const std::string index = stem.substr(layers.size(), dot - layers.size());
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) return {};
    const std::string module = stem.substr(dot + 1);
    for (const auto& [from, to] : kLayerNames)
        if (module == from) return "blk." + index + "." + to + suffix;
    return {};
}

TensorMatch matchTensors(const TensorSource& a, const TensorSource& b) {
    // A QuantLens export on one side (the other not one): its quantized tensors are matched by their
    // source names, whatever names and parts the layout stores them in (export_reader.h).
    const std::vector<ExportedEntry> exportA = exportedEntries(a);
    const std::vector<ExportedEntry> exportB =
        exportA.empty() ? exportedEntries(b) : std::vector<ExportedEntry>();
    std::set<std::string> partsB;
    for (const auto& e : exportB)
        partsB.insert(e.parts.begin(), e.parts.end());
    std::map<std::string, std::string> bByName, bByGguf; // B's names, and B's HF names by their GGUF name
    for (const auto& t : b.tensors()) {
        if (partsB.count(t.name)) continue;
        bByName[t.name] = t.name;
        if (const std::string g = ggufNameOf(t.name); !g.empty()) bByGguf[g] = t.name;
    }
    std::set<std::string> partsA;
    if (!exportA.empty() && exportedEntries(b).empty())
        for (const auto& e : exportA)
            partsA.insert(e.parts.begin(), e.parts.end());
    TensorMatch m;
    std::map<std::string, bool> usedB;
    std::vector<std::string> namesA;
    for (const auto& e : partsA.empty() ? std::vector<ExportedEntry>() : exportA)
        if (!e.parts.empty()) namesA.push_back(e.name);
    for (const auto& t : a.tensors())
        if (!partsA.count(t.name)) namesA.push_back(t.name);
    for (const std::string& name : namesA) {
        if (entryNamed(exportB, name) && !usedB[name]) { // B is A's export
            usedB[name] = true;
            m.pairs.push_back({name, name, "quantlens-export"});
            continue;
        }
        if (!partsA.empty() && entryNamed(exportA, name) && bByName.count(name) && !usedB[name]) {
            usedB[name] = true;
            m.pairs.push_back({name, name, "quantlens-export"}); // A is the export
            continue;
        }
        const TensorInfo t{name, DType::F32, {}, 0, {}};
        std::string other, how;
        if (bByName.count(t.name)) {
            other = t.name, how = "exact";
        } else if (const std::string g = ggufNameOf(t.name); !g.empty() && bByName.count(g)) {
            other = g, how = "gguf"; // A is a Hugging Face checkpoint, B a GGUF
        } else if (bByGguf.count(t.name)) {
            other = bByGguf[t.name], how = "gguf"; // A is the GGUF
        } else if (const std::string dq = t.name + std::string(kDequantOutput); bByName.count(dq)) {
            other = dq, how = "qdq"; // A is the float model, B its QDQ export
        } else if (const std::string w = qdqWeightName(t.name); !w.empty() && bByName.count(w)) {
            other = w, how = "qdq"; // A is the QDQ export
        } else if (const std::string p = t.name + std::string(kPacked); bByName.count(p)) {
            other = p, how = "compressed-tensors"; // B is a pack-quantized export of A
        } else if (const std::string w = packedWeightName(t.name); !w.empty() && bByName.count(w)) {
            other = w, how = "compressed-tensors"; // A is the export
        }
        if (other.empty() || usedB[other]) {
            m.onlyA.push_back(t.name);
            continue;
        }
        usedB[other] = true;
        m.pairs.push_back({t.name, other, how});
    }
    for (const auto& t : b.tensors())
        if (!usedB[t.name] && !partsB.count(t.name)) m.onlyB.push_back(t.name);
    for (const auto& e : exportB)
        if (!usedB[e.name]) m.onlyB.push_back(e.name);
    return m;
}

TensorDiff diffTensors(const TensorSource& a, const TensorSource& b, const TensorPair& pair,
                       const JobRequest* requantize) {
    TensorDiff d;
    d.pair = pair;
    try {
        // A QuantLens export's side: its codes and parameters rebuilt from the layout it was written in.
        std::optional<ExportedEntry> entryA, entryB;
        std::optional<QuantizedTensor> xa, xb;
        if (pair.how == "quantlens-export") {
            const std::vector<ExportedEntry> entriesB = exportedEntries(b);
            const std::vector<ExportedEntry> entriesA =
                entryNamed(entriesB, pair.b) ? std::vector<ExportedEntry>() : exportedEntries(a);
            if (const auto* e = entryNamed(entriesB, pair.b)) {
                entryB = *e;
                xb = readExported(b, *e);
            } else if (const auto* f = entryNamed(entriesA, pair.a)) {
                entryA = *f;
                xa = readExported(a, *f);
            } else {
                throw FileError("neither file is a QuantLens export holding '" + pair.b + "'");
            }
        }
        const TensorInfo& ia = requireTensor(a, entryA ? entryA->parts.front() : pair.a);
        const TensorInfo& ib = requireTensor(b, entryB ? entryB->parts.front() : pair.b);
        d.dtypeA = ia.dtype;
        d.dtypeB = ib.dtype;
        // Stored codes, read once: for the code comparison, and as the values of a compressed-tensors side.
        std::string whyA, whyB;
        const auto sa = requantize || xa ? std::nullopt : storedQuantization(a, pair.a, &whyA);
        const auto sb = xb ? std::nullopt : storedQuantization(b, pair.b, &whyB);
        const bool dqA = readAsDequantized(sa) || xa, dqB = readAsDequantized(sb) || xb;
        const Shape shapeA = xa ? xa->plan.ownShape() : dqA ? sa->shape : ia.shape; // not its view
        const Shape shapeB = xb ? xb->plan.ownShape() : dqB ? sb->shape : ib.shape;
        d.shape = shapeA;
        if (shapeA != shapeB) {
            d.failure = "shapes differ: " + toString(shapeA) + " and " + toString(shapeB);
            return d;
        }
        const std::vector<std::int64_t> bRows = rowsOfB(a, b, pair, shapeA, d.note);
        const std::vector<float> valuesA = xa    ? exportedValues(*xa)
                                           : dqA ? sa->dequantized()
                                                 : std::vector<float>();
        const std::vector<float> valuesB = xb    ? exportedValues(*xb)
                                           : dqB ? sb->dequantized()
                                                 : std::vector<float>();
        std::optional<LoadedTensor> ta, tb;
        const ValuesView va = dqA ? ValuesView::of(valuesA) : ta.emplace(a, ia).view();
        const ValuesView vb = dqB ? ValuesView::of(valuesB) : tb.emplace(b, ib).view();
        if (xa || xb)
            addNote(d.note,
                    std::string(xa ? "A's" : "B's") +
                        " QuantLens export read as its codes dequantized with the plan's own arithmetic");
        else if (dqA || dqB)
            addNote(d.note, std::string(dqA && dqB ? "both sides'"
                                        : dqA      ? "A's"
                                                   : "B's") +
                                " compressed-tensors codes read as (q - zero point) * scale in f32");
        const std::int64_t n = va.count;
        const std::int64_t inner = shapeA.empty() || shapeA[0] == 0 ? 1 : n / shapeA[0];
        const auto at = [&](std::int64_t i) { // B's element for A's element i
            return bRows.empty() ? i : bRows[static_cast<std::size_t>(i / inner)] * inner + i % inner;
        };
        double maxErr = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const float x = va.at(i), y = vb.at(at(i));
            d.stats.addElement(x, y, i);
            if (std::isfinite(x) && std::isfinite(y))
                maxErr = std::max(maxErr, std::fabs(double(x) - double(y)));
        }
        d.error = Histogram(-std::max(maxErr, 1e-30), std::max(maxErr, 1e-30), 101);
        // ULPs in the tensors' own format when both share one, else in f32 (the wider view).
        const DType ea = dqA ? DType::F32 : ia.dtype, eb = dqB ? DType::F32 : ib.dtype;
        const bool sameFormat = ea == eb && ValuesView::readsInPlace(ea) && ValuesView::readsInPlace(eb);
        const int width = sameFormat && ea != DType::F32 ? 16 : 32;
        for (std::int64_t i = 0; i < n; ++i) {
            const float x = va.at(i), y = vb.at(at(i));
            const std::uint32_t bx = sameFormat ? rawBits(va, i) : f32Bits(x);
            const std::uint32_t by = sameFormat ? rawBits(vb, at(i)) : f32Bits(y);
            if (!std::isfinite(x) || !std::isfinite(y)) { // no difference or ULP to measure: counted
                d.nonFiniteA += !std::isfinite(x);
                d.nonFiniteB += !std::isfinite(y);
                d.nonFiniteMismatches += !sameNonFinite(x, y, bx, by, sameFormat);
                continue;
            }
            d.error.add(double(x) - double(y));
            d.maxUlp = std::max(d.maxUlp, std::abs(orderedBits(bx, width) - orderedBits(by, width)));
        }
        addNote(d.note, nonFiniteNote(d));
        if (!sameFormat)
            addNote(d.note, "ULPs counted in f32 (" +
                                (ea == eb ? std::string(nameOf(ea)) + " values have no ULP of their own"
                                          : std::string("the dtypes differ")) +
                                ")");
        if (xb && requantize) { // every grid: integer or float codes, steps or inverse steps
            try {
                d.codes =
                    compareExported(requantizedTensor(a, pair, *requantize), *xb, exportFormat(*xb, *entryB));
            } catch (const QuantError& e) {
                addNote(d.note, e.what());
            } catch (const FileError& e) {
                addNote(d.note, "codes not compared: re-quantizing A: " + std::string(e.what()));
            }
        } else if (!xa && !xb) {
            std::string whyRequantized;
            const auto qa = requantize ? requantized(a, pair, *requantize, whyRequantized) : sa;
            compareStoredCodes(qa, requantize ? whyRequantized : whyA, sb, whyB, pair, bRows,
                               requantize != nullptr, d);
        }
        for (const auto& name : entryA ? entryA->parts : std::vector<std::string>{pair.a})
            a.release(name);
        for (const auto& name : entryB ? entryB->parts : std::vector<std::string>{pair.b})
            b.release(name);
    } catch (const std::bad_alloc&) {
        d.failure = "out of memory";
    } catch (const std::exception& e) {
        d.failure = e.what();
    }
    return d;
}

json diffReport(const std::string& fileA, const std::string& fileB, const std::vector<TensorDiff>& diffs) {
    json tensors = json::array();
    for (const TensorDiff& d : diffs) {
        json t = {{"name", d.pair.a},
                  {"name_b", d.pair.b},
                  {"matched", d.pair.how},
                  {"shape", d.shape},
                  {"dtype", std::string(nameOf(d.dtypeA))},
                  {"dtype_b", std::string(nameOf(d.dtypeB))}};
        if (!d.failure.empty()) {
            t["error"] = d.failure;
        } else {
            t["stats"] = errorStatsJson(d.stats);
            t["stats"]["max_ulp"] = d.maxUlp;
            t["stats"]["non_finite_count_b"] = d.nonFiniteB; // A's are nan_count + inf_count
            t["stats"]["non_finite_mismatches"] = d.nonFiniteMismatches;
            t["histograms"] = {{"error", toJson(d.error)}};
            if (d.codes) t["codes"] = toJson(*d.codes);
            if (!d.note.empty()) t["note"] = d.note;
        }
        tensors.push_back(std::move(t));
    }
    return {{"file", fileA}, {"file_b", fileB}, {"tensors", std::move(tensors)}};
}

} // namespace ql
