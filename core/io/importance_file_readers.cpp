// The GGUF and safetensors forms of importance files; the legacy form and the checks are in
// importance_file.cpp.
#include "base/error.h"
#include "io/gguf_source.h"
#include "io/importance_file.h"
#include "io/importance_file_check.h"
#include "io/printable.h"
#include "io/safetensors_source.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace ql {

namespace {

constexpr std::uint32_t kGgmlF32 = 0; // GGML_TYPE_F32

bool removeSuffix(std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    s.resize(s.size() - suffix.size());
    return true;
}

std::vector<float> f32Values(const GgufSource& src, const GgufTensorEntry& e) {
    std::vector<float> v(static_cast<std::size_t>(e.elements));
    std::memcpy(v.data(), src.tensorData(e), v.size() * sizeof(float)); // GgufSource checked the bounds
    return v;
}

} // namespace

ImportanceFile readImatrixGguf(const std::string& path) {
    // llama.cpp's IMatrixCollector::save_imatrix (tools/imatrix/imatrix.cpp at 006e7ef9) and
    // llama-quantize's load_imatrix (tools/quantize/quantize.cpp at 03161a4e, through
    // common/imatrix-loader.cpp at 0a32c5ee; read November 2026): general.type = "imatrix",
    // imatrix.datasets (string array), imatrix.chunk_count and imatrix.chunk_size (u32); per weight
    // <name>.in_sum2 F32 ne = [channels, matrices], <name>.counts F32 ne = [1, matrices] and, from
    // newer writers, <name>.in_sum (the plain sums, not needed here).
    const auto src = GgufSource::open(path);
    ImportanceFile file;
    file.path = path;
    file.format = kImatrixGgufFormat;
    const auto fail = [&](const std::string& reason) -> void { throw FileError(path + ": " + reason); };

    const auto& meta = src->metadata();
    const auto type = meta.find("general.type");
    if (type == meta.end()) fail("a GGUF without general.type, not an importance matrix");
    if (type->second.type != GgufValue::String || type->second.s != "imatrix")
        fail("general.type is " + type->second.toString() + ", not \"imatrix\": not an importance matrix");
    if (const auto d = meta.find("imatrix.datasets"); d != meta.end()) {
        if (d->second.type != GgufValue::Array || d->second.elementType != GgufValue::String)
            fail("imatrix.datasets is not an array of strings");
        for (const GgufValue& s : d->second.elements)
            file.datasets.push_back(s.s);
    }
    if (const auto c = meta.find("imatrix.chunk_count"); c != meta.end()) {
        const GgufValue& v = c->second;
        if (v.type == GgufValue::U8 || v.type == GgufValue::U16 || v.type == GgufValue::U32 ||
            v.type == GgufValue::U64)
            file.chunks = v.u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                              ? std::numeric_limits<std::int64_t>::max()
                              : static_cast<std::int64_t>(v.u);
        else if (v.type == GgufValue::I8 || v.type == GgufValue::I16 || v.type == GgufValue::I32 ||
                 v.type == GgufValue::I64)
            file.chunks = v.i;
        else
            fail("imatrix.chunk_count is " + v.toString() + ", not an integer");
        if (file.chunks < 0) fail("negative imatrix.chunk_count " + std::to_string(file.chunks));
    }

    struct Parts {
        const GgufTensorEntry* sum2 = nullptr;
        const GgufTensorEntry* counts = nullptr;
        const GgufTensorEntry* sum = nullptr;
    };
    std::map<std::string, Parts> parts; // other tensors are ignored, as llama.cpp does
    for (const TensorInfo& info : src->tensors()) {
        std::string name = info.name;
        const GgufTensorEntry& e = src->entry(info.name);
        if (removeSuffix(name, ".in_sum2"))
            parts[name].sum2 = &e;
        else if (removeSuffix(name, ".counts"))
            parts[name].counts = &e;
        else if (removeSuffix(name, ".in_sum"))
            parts[name].sum = &e;
    }
    if (parts.empty()) fail("no <weight>.in_sum2 / <weight>.counts tensors");

    for (const auto& [name, p] : parts) {
        const std::string where = "entry '" + printable(name) + "': ";
        if (name.empty()) fail("a tensor named only by its suffix names no weight");
        if (!p.sum2) fail(where + (p.counts ? "counts without in_sum2" : "in_sum without in_sum2"));
        if (!p.counts) fail(where + "in_sum2 without counts");
        for (const GgufTensorEntry* t : {p.sum2, p.counts, p.sum})
            if (t && t->type != kGgmlF32)
                fail(where + printable(t->name) + " has ggml type " + std::to_string(t->type) + ", not F32");
        const std::int64_t channels = p.sum2->ne.empty() ? 0 : static_cast<std::int64_t>(p.sum2->ne[0]);
        if (channels < 1 || p.sum2->elements < 1) fail(where + "in_sum2 holds no values");
        const std::int64_t matrices = p.sum2->elements / channels;
        if (matrices > std::numeric_limits<int>::max()) fail(where + "too many matrices");
        if (p.counts->elements != matrices)
            fail(where + "in_sum2 holds " + std::to_string(matrices) + " matrices of " +
                 std::to_string(channels) + " channels, but counts holds " +
                 std::to_string(p.counts->elements) + " values");
        if (p.sum && p.sum->elements != p.sum2->elements)
            fail(where + "in_sum holds " + std::to_string(p.sum->elements) + " values, in_sum2 " +
                 std::to_string(p.sum2->elements));

        const std::vector<float> sums = f32Values(*src, *p.sum2);
        const std::vector<float> counts = f32Values(*src, *p.counts);
        for (std::size_t i = 0; i < sums.size(); ++i)
            if (!std::isfinite(sums[i]) || sums[i] < 0.0f)
                fail(where + "sum of squares " + std::to_string(sums[i]) + " at value " + std::to_string(i) +
                     (std::isfinite(sums[i]) ? " is negative" : " is not finite"));
        ImportanceEntry entry;
        entry.matrices = static_cast<int>(matrices);
        entry.sqMean.resize(sums.size());
        for (std::int64_t m = 0; m < matrices; ++m) {
            const float raw = counts[static_cast<std::size_t>(m)];
            if (!std::isfinite(raw) || raw < 0.0f || raw > 9.0e18f)
                fail(where + "token count " + std::to_string(raw) + " of matrix " + std::to_string(m) +
                     " is not a count");
            // common_imatrix_load rounds the counts (std::lround); load_imatrix divides by the
            // count as a float and fills a matrix that saw no token with ones.
            const long count = std::lround(raw);
            entry.counts.push_back(static_cast<double>(count));
            const float c = static_cast<float>(count);
            for (std::int64_t j = 0; j < channels; ++j) {
                const auto k = static_cast<std::size_t>(m * channels + j);
                entry.sqMean[k] = c > 0.0f ? sums[k] / c : 1.0f;
            }
        }
        importance_detail::addEntry(file, name, std::move(entry));
    }
    return file;
}

namespace {

// Statistics are stored in the wide floating types; fp8 or 4-bit means would be a mistake.
bool isStatisticsType(DType t) {
    return t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// Per-column mean of x^2 over every row of `t` (rows: all leading dimensions), summed in double.
std::vector<float> meanOfSquares(const Tensor& t, std::int64_t channels) {
    const std::int64_t rows = t.elementCount() / channels;
    std::vector<double> sum(static_cast<std::size_t>(channels), 0.0);
    std::vector<float> row(static_cast<std::size_t>(channels));
    for (std::int64_t r = 0; r < rows; ++r) {
        if (t.dtype() == DType::F64) { // exact: no detour through f32
            const std::byte* p = t.data() + static_cast<std::size_t>(r * channels) * sizeof(double);
            for (std::int64_t j = 0; j < channels; ++j) {
                double x;
                std::memcpy(&x, p + static_cast<std::size_t>(j) * sizeof(double), sizeof x);
                sum[static_cast<std::size_t>(j)] += x * x;
            }
            continue;
        }
        t.toFloat(r * channels, channels, row.data());
        for (std::int64_t j = 0; j < channels; ++j) {
            const double x = row[static_cast<std::size_t>(j)];
            sum[static_cast<std::size_t>(j)] += x * x;
        }
    }
    std::vector<float> mean(sum.size());
    for (std::size_t j = 0; j < sum.size(); ++j)
        mean[j] = static_cast<float>(sum[j] / static_cast<double>(rows));
    return mean;
}

} // namespace

ImportanceFile readSafetensorsStatistics(const std::string& path) {
    const auto src = SafetensorsSource::openFile(path);
    ImportanceFile file;
    file.path = path;
    file.format = kSafetensorsStatsFormat;
    const auto fail = [&](const std::string& reason) -> void { throw FileError(path + ": " + reason); };
    for (const TensorInfo& info : src->tensors()) {
        std::string module = info.name;
        const bool means = removeSuffix(module, ".input_sq_mean");
        const bool samples = !means && removeSuffix(module, ".inputs");
        if (!means && !samples) continue; // other tensors may sit beside the statistics
        const std::string where = "tensor '" + printable(info.name) + "': ";
        if (module.empty()) fail(where + "no module name before the suffix");
        if (!isStatisticsType(info.dtype))
            fail(where + "dtype " + std::string(nameOf(info.dtype)) + ", expected f64, f32, f16 or bf16");
        ImportanceEntry entry;
        if (means) {
            if (info.shape.size() != 1 || info.shape[0] < 1)
                fail(where + "shape " + toString(info.shape) + ", expected [in_features]");
            entry.sqMean = src->load(info.name).toFloatVector();
        } else {
            if (info.shape.size() < 2 || info.shape.back() < 1)
                fail(where + "shape " + toString(info.shape) + ", expected [samples, in_features]");
            const std::int64_t channels = info.shape.back();
            const std::int64_t rows = elementCount(info.shape) / channels;
            if (rows < 1) fail(where + "holds no samples");
            entry.sqMean = meanOfSquares(src->load(info.name), channels);
            entry.counts = {static_cast<double>(rows)};
        }
        src->release(info.name);
        const std::string weight = module + ".weight";
        if (file.entries.count(weight))
            fail("entry '" + printable(weight) + "' appears twice (" + printable(module) +
                 ".input_sq_mean and " + printable(module) + ".inputs)");
        importance_detail::addEntry(file, weight, std::move(entry));
    }
    if (file.entries.empty()) fail("no <module>.input_sq_mean or <module>.inputs tensors");
    const auto& meta = src->metadata();
    if (const auto d = meta.find("dataset"); d != meta.end() && !d->second.empty())
        file.datasets.push_back(d->second);
    if (const auto c = meta.find("chunks"); c != meta.end()) {
        try {
            std::size_t used = 0;
            file.chunks = std::stoll(c->second, &used);
            if (used != c->second.size() || file.chunks < 0) throw std::invalid_argument("chunks");
        } catch (const std::exception&) {
            fail("__metadata__ chunks is '" + printable(c->second) + "', not a count");
        }
    }
    return file;
}

} // namespace ql
