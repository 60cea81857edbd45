#include "io/llama_rows.h"

#include "base/error.h"
#include "io/gguf_source.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <regex>

namespace ql {
namespace {

// The architectures whose converter classes apply LlamaModel.permute to q and k: LlamaModel itself
// (Mistral and LLaVA checkpoints convert to "llama" too), its subclasses GraniteModel and
// GraniteMoeModel, and DeciModel. Llama4Model turns it off (undo_permute = False).
constexpr const char* kPermutingArchs[] = {"llama", "granite", "granitemoe", "deci"};

} // namespace

std::vector<std::int64_t> llamaRowPermutation(std::int64_t rows, std::int64_t heads) {
    // 2 · heads must not overflow first: a GGUF may claim any head count.
    if (heads <= 0 || heads > std::numeric_limits<std::int64_t>::max() / 2 || rows % (2 * heads) != 0)
        throw QuantError(std::to_string(rows) + " rows do not split into " + std::to_string(heads) +
                         " heads of two halves");
    const std::int64_t half = rows / heads / 2;
    std::vector<std::int64_t> to(static_cast<std::size_t>(rows));
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s < 2; ++s)
            for (std::int64_t i = 0; i < half; ++i)
                to[static_cast<std::size_t>((h * 2 + s) * half + i)] = (h * half + i) * 2 + s;
    return to;
}

LlamaRows llamaRowsOf(const GgufSource& gguf, const std::string& ggufName, std::int64_t rows) {
    static const std::regex qk(R"(blk\.\d+\.attn_(q|k)\.(weight|bias))");
    std::smatch m;
    if (!std::regex_match(ggufName, m, qk)) return {};
    const bool isK = m[1] == "k";
    const std::string arch = gguf.stringValue("general.architecture");
    const std::string reorders = "llama.cpp's converter reorders the rows of q and k for its rotary layout";
    if (arch.empty())
        return {{},
                reorders + " in llama-family models; this GGUF has no general.architecture, so rows are "
                           "compared as stored"};
    if (std::none_of(std::begin(kPermutingArchs), std::end(kPermutingArchs),
                     [&](const char* a) { return arch == a; }))
        return {};
    const std::string headKey = arch + ".attention.head_count", kvKey = headKey + "_kv";
    const std::optional<std::int64_t> heads = gguf.integerValue(headKey);
    if (!heads)
        return {{},
                reorders + "; this GGUF has no integer " + headKey +
                    ", so rows are compared as stored "
                    "(large differences here may be that order, not quantization)"};
    std::optional<std::int64_t> used = heads;
    std::string source = headKey;
    if (isK) {
        if (const auto kv = gguf.integerValue(kvKey))
            used = kv, source = kvKey;
        else
            source += " (no " + kvKey + ": as llama.cpp, kv heads = heads)";
    }
    try {
        return {llamaRowPermutation(rows, *used), "rows un-permuted from llama.cpp's rotary order (" +
                                                      source + " = " + std::to_string(*used) + ")"};
    } catch (const QuantError& e) {
        return {{},
                reorders + ", but " + source + " = " + std::to_string(*used) + " does not fit: " + e.what() +
                    "; rows are compared as stored"};
    }
}

std::optional<LlamaRows> GgufSource::convertedRows(const std::string& name, std::int64_t rows) const {
    return llamaRowsOf(*this, name, rows);
}

} // namespace ql
