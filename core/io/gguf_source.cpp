#include "io/gguf_source.h"

#include "base/error.h"
#include "io/gguf_blocks.h"
#include "io/printable.h"
#include "io/untrusted_json.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unordered_set>

namespace ql {

namespace {

constexpr std::uint32_t kMaxDims = 4; // GGML_MAX_DIMS
constexpr int kMaxNesting = 16;       // arrays of arrays: deeper is certainly not a model

// What a read is of, for its error message: a string, or a function that makes one, so that text
// quoting a long key is built only when a read fails, never once per array element.
template <typename What> std::string describe(const What& what) {
    if constexpr (std::is_invocable_v<const What&>)
        return what();
    else
        return std::string(what);
}

/// Bounds-checked little-endian reads over the mapped header; every failure names what was being read.
class Reader {
public:
    Reader(const std::byte* data, std::uint64_t size, const std::string& path)
        : m_data(data)
        , m_size(size)
        , m_path(path) {}

    std::uint64_t pos() const { return m_pos; }
    std::uint64_t left() const { return m_size - m_pos; }
    [[noreturn]] void fail(const std::string& reason) const { throw FileError(m_path + ": " + reason); }

    template <typename What> void need(std::uint64_t n, const What& what) const {
        if (n > left())
            fail("truncated " + describe(what) + " at byte " + std::to_string(m_pos) + " (needs " +
                 std::to_string(n) + " bytes, " + std::to_string(left()) + " left)");
    }
    template <typename T, typename What> T read(const What& what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, m_data + m_pos, sizeof(T)); // GGUF is little-endian, as is every host we build for
        m_pos += sizeof(T);
        return v;
    }
    template <typename What> void copy(char* out, std::uint64_t n, const What& what) {
        need(n, what);
        std::memcpy(out, m_data + m_pos, static_cast<std::size_t>(n));
        m_pos += n;
    }
    template <typename What> std::string string(const What& what) {
        const auto n = read<std::uint64_t>([&] { return describe(what) + " length"; });
        if (n > left())
            fail(describe(what) + " at byte " + std::to_string(m_pos) + " claims " + std::to_string(n) +
                 " bytes, but only " + std::to_string(left()) + " are left in the file");
        std::string s(reinterpret_cast<const char*>(m_data + m_pos), static_cast<std::size_t>(n));
        m_pos += n;
        return s;
    }

private:
    const std::byte* m_data;
    std::uint64_t m_size;
    std::uint64_t m_pos = 0;
    const std::string& m_path;
};

// The fewest bytes one value of a type takes, so an array's count can be checked before allocating.
std::uint64_t minBytes(std::uint32_t type) {
    switch (type) {
    case GgufValue::U8:
    case GgufValue::I8:
    case GgufValue::Bool:
        return 1;
    case GgufValue::U16:
    case GgufValue::I16:
        return 2;
    case GgufValue::U32:
    case GgufValue::I32:
    case GgufValue::F32:
        return 4;
    case GgufValue::U64:
    case GgufValue::I64:
    case GgufValue::F64:
    case GgufValue::String:
        return 8;
    case GgufValue::Array:
        return 12;
    default:
        return 0;
    }
}

// Strings and nested arrays across all metadata: a real vocabulary holds a few hundred thousand;
// far more means a crafted file that would cost memory out of all proportion to its size.
constexpr std::uint64_t kMaxMetadataObjects = 4u << 20;

GgufValue scalarAt(std::uint32_t type, const char* p) {
    GgufValue v;
    v.type = static_cast<GgufValue::Type>(type);
    const auto get = [p](auto x) {
        std::memcpy(&x, p, sizeof x);
        return x;
    };
    switch (type) {
    case GgufValue::U8:
    case GgufValue::Bool:
        v.u = get(std::uint8_t{});
        break;
    case GgufValue::I8: {
        const std::int8_t byte = get(std::int8_t{}); // signed by the format: its sign extends
        v.i = byte;
        break;
    }
    case GgufValue::U16:
        v.u = get(std::uint16_t{});
        break;
    case GgufValue::I16:
        v.i = get(std::int16_t{});
        break;
    case GgufValue::U32:
        v.u = get(std::uint32_t{});
        break;
    case GgufValue::I32:
        v.i = get(std::int32_t{});
        break;
    case GgufValue::U64:
        v.u = get(std::uint64_t{});
        break;
    case GgufValue::I64:
        v.i = get(std::int64_t{});
        break;
    case GgufValue::F32:
        v.f = get(float{});
        break;
    case GgufValue::F64:
        v.f = get(double{});
        break;
    default:
        break;
    }
    return v;
}

// `key` as messages show it (printable()).
GgufValue readValue(Reader& r, std::uint32_t type, const std::string& key, int depth,
                    std::uint64_t& objects) {
    // Built only on failure: an array's elements share its key, which may be long.
    const auto what = [&key] { return "value of '" + key + "'"; };
    if (type != GgufValue::String && type != GgufValue::Array) {
        const std::uint64_t n = minBytes(type);
        if (n == 0) r.fail("metadata '" + key + "': unknown value type " + std::to_string(type));
        const std::uint64_t at = r.pos();
        char bytes[8];
        r.copy(bytes, n, what);
        GgufValue v = scalarAt(type, bytes);
        if (type == GgufValue::Bool && v.u > 1)
            r.fail("metadata '" + key + "': bool value " + std::to_string(v.u) + " at byte " +
                   std::to_string(at) + " is neither 0 nor 1");
        return v;
    }
    GgufValue v;
    v.type = static_cast<GgufValue::Type>(type);
    if (type == GgufValue::String) {
        v.s = r.string(what);
        return v;
    }
    if (depth >= kMaxNesting)
        r.fail("metadata '" + key + "': arrays nested deeper than " + std::to_string(kMaxNesting));
    const auto et = r.read<std::uint32_t>([&key] { return "array type of '" + key + "'"; });
    if (minBytes(et) == 0) r.fail("metadata '" + key + "': unknown array element type " + std::to_string(et));
    v.elementType = static_cast<GgufValue::Type>(et);
    const auto n = r.read<std::uint64_t>([&key] { return "array length of '" + key + "'"; });
    if (n > r.left() / minBytes(et))
        r.fail("metadata '" + key + "': array of " + std::to_string(n) + " elements is larger than the " +
               std::to_string(r.left()) + " bytes left in the file");
    v.count = n;
    if (et != GgufValue::String && et != GgufValue::Array) {
        const std::uint64_t at = r.pos();
        v.raw.resize(static_cast<std::size_t>(n * minBytes(et)));
        r.copy(v.raw.data(), v.raw.size(), what);
        if (et == GgufValue::Bool)
            for (std::uint64_t k = 0; k < n; ++k)
                if (static_cast<unsigned char>(v.raw[k]) > 1)
                    r.fail("metadata '" + key + "': bool value " +
                           std::to_string(static_cast<unsigned char>(v.raw[k])) + " at byte " +
                           std::to_string(at + k) + " is neither 0 nor 1");
        return v;
    }
    objects += n;
    if (objects > kMaxMetadataObjects)
        r.fail("metadata '" + key + "': more than " + std::to_string(kMaxMetadataObjects) +
               " strings and arrays in the metadata: refused");
    v.elements.reserve(static_cast<std::size_t>(n));
    for (std::uint64_t k = 0; k < n; ++k)
        v.elements.push_back(readValue(r, et, key, depth + 1, objects));
    return v;
}

bool isPowerOfTwo(std::uint64_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

std::string formatFloat(double f) {
    std::string s = std::to_string(f);
    while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.')
        s.pop_back();
    return s;
}

} // namespace

bool hasGgufMagic(const char* head, std::size_t n) {
    return n >= 4 && std::memcmp(head, "GGUF", 4) == 0;
}

GgufValue GgufValue::at(std::uint64_t k) const {
    if (type != Array || k >= count) return {};
    if (!raw.empty()) return scalarAt(elementType, raw.data() + k * minBytes(elementType));
    return elements[static_cast<std::size_t>(k)];
}

std::vector<ModelInfoEntry> GgufSource::modelInfo() const {
    std::vector<ModelInfoEntry> info{modelInfoEntry("GGUF version", std::to_string(m_version))};
    for (const auto& [key, value] : m_metadata)
        info.push_back(modelInfoEntry(key, value.toString()));
    return info;
}

std::string GgufValue::toString() const {
    switch (type) {
    case U8:
    case U16:
    case U32:
    case U64:
        return std::to_string(u);
    case I8:
    case I16:
    case I32:
    case I64:
        return std::to_string(i);
    case F32:
    case F64:
        return formatFloat(f);
    case Bool:
        return u ? "true" : "false";
    case String: // shown in messages: escaped
        return '"' + printable(s) + '"';
    case Array: {
        std::string out = "[";
        const std::uint64_t shown = std::min<std::uint64_t>(count, 8);
        for (std::uint64_t k = 0; k < shown; ++k)
            out += (k ? ", " : "") + at(k).toString();
        if (shown < count) out += ", ... (" + std::to_string(count) + " in all)";
        return out + "]";
    }
    }
    return {};
}

std::unique_ptr<GgufSource> GgufSource::open(const std::string& path) {
    requireRegularFile(path);
    std::unique_ptr<GgufSource> src(new GgufSource);
    src->m_path = path;
    src->m_mapping = MappedFile::open(path);
    src->parse();
    return src;
}

void GgufSource::parse() {
    Reader r(m_mapping->data(), m_mapping->size(), m_path);
    r.need(4, "header");
    if (!hasGgufMagic(reinterpret_cast<const char*>(m_mapping->data()), 4))
        r.fail("not a GGUF file (no GGUF magic)");
    r.read<std::uint32_t>("magic");
    m_version = r.read<std::uint32_t>("header (version)");
    if (m_version == 1) r.fail("GGUF version 1 is not supported (only versions 2 and 3)");
    if (m_version != 2 && m_version != 3) {
        if ((m_version & 0xffff) == 0 && m_version != 0)
            r.fail("a big-endian GGUF file (version field " + std::to_string(m_version) +
                   "): only little-endian is supported");
        r.fail("unsupported GGUF version " + std::to_string(m_version) + " (only versions 2 and 3)");
    }
    const auto nTensors = r.read<std::uint64_t>("header (tensor count)");
    const auto nKv = r.read<std::uint64_t>("header (metadata count)");
    // Each key/value takes at least 13 bytes, each tensor info at least 24: refuse counts the file cannot
    // hold.
    if (nKv > r.left() / 13)
        r.fail("header claims " + std::to_string(nKv) + " metadata entries, more than the file can hold");
    if (nTensors > r.left() / 24)
        r.fail("header claims " + std::to_string(nTensors) + " tensors, more than the file can hold");

    std::uint64_t objects = 0;
    for (std::uint64_t k = 0; k < nKv; ++k) {
        std::string key = r.string("metadata key " + std::to_string(k));
        const std::string shown = printable(key); // the key as messages quote it
        const auto type = r.read<std::uint32_t>("type of metadata '" + shown + "'");
        GgufValue v = readValue(r, type, shown, 0, objects);
        if (!m_metadata.emplace(key, std::move(v)).second)
            r.fail("metadata key '" + shown + "' appears twice");
    }
    if (const auto it = m_metadata.find("general.alignment"); it != m_metadata.end()) {
        if (it->second.type != GgufValue::U32) r.fail("general.alignment must be a u32");
        if (!isPowerOfTwo(it->second.u))
            r.fail("general.alignment " + std::to_string(it->second.u) + " is not a power of two");
        m_alignment = it->second.u;
    }

    m_entries.reserve(static_cast<std::size_t>(nTensors));
    std::unordered_set<std::string> unlistedNames;
    for (std::uint64_t k = 0; k < nTensors; ++k) {
        GgufTensorEntry e;
        e.name = r.string("name of tensor " + std::to_string(k));
        if (e.name.empty()) r.fail("tensor " + std::to_string(k) + " has an empty name");
        if (!isValidUtf8(e.name)) r.fail("the name of tensor " + std::to_string(k) + " is not valid UTF-8");
        const std::string at = "tensor '" + printable(e.name) + "': ";
        const auto nDims = r.read<std::uint32_t>(at + "dimension count");
        if (nDims > kMaxDims) r.fail(at + std::to_string(nDims) + " dimensions (GGUF allows at most 4)");
        std::uint64_t elements = 1;
        bool overflow = false;
        for (std::uint32_t d = 0; d < nDims; ++d) {
            const auto n = r.read<std::uint64_t>(at + "dimensions");
            e.ne.push_back(n);
            if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
                (n != 0 &&
                 elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / n))
                overflow = true;
            else
                elements *= n;
        }
        if (overflow || !dimensionsFit(e.ne)) r.fail(at + "element count overflows");
        e.type = r.read<std::uint32_t>(at + "type");
        e.offset = r.read<std::uint64_t>(at + "offset");
        const auto traits = ggmlTypeTraits(e.type);
        if (!traits) { // left out, said why; its bytes are never read, so their range is not checked
            if (!unlistedNames.insert(e.name).second || m_index.count(e.name))
                r.fail(at + "name appears twice");
            m_unlisted.push_back(
                {e.name, "ggml type " + ggmlTypeName(e.type) + " is not one QuantLens decodes"});
            continue;
        }
        const std::uint64_t ne0 = e.ne.empty() ? 1 : e.ne[0];
        if (ne0 % static_cast<std::uint64_t>(traits->blockElems) != 0)
            r.fail(at + "first dimension " + std::to_string(ne0) + " is not a multiple of " +
                   std::string(traits->name) + "'s block size " + std::to_string(traits->blockElems));
        e.elements = static_cast<std::int64_t>(elements);
        const std::uint64_t blocks = elements / static_cast<std::uint64_t>(traits->blockElems);
        if (blocks >
            std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(traits->blockBytes))
            r.fail(at + "byte size overflows");
        e.bytes = blocks * static_cast<std::uint64_t>(traits->blockBytes);
        e.shape.assign(e.ne.rbegin(), e.ne.rend());
        if (unlistedNames.count(e.name) || !m_index.emplace(e.name, m_entries.size()).second)
            r.fail(at + "name appears twice");
        m_entries.push_back(std::move(e));
    }

    // The data section starts at the next multiple of the alignment (an empty model may end before it).
    const std::uint64_t end = r.pos();
    m_dataStart = (end + m_alignment - 1) / m_alignment * m_alignment;
    const std::uint64_t fileSize = m_mapping->size();
    const std::uint64_t dataSize = m_dataStart <= fileSize ? fileSize - m_dataStart : 0;
    for (const auto& e : m_entries) {
        const std::string at = "tensor '" + printable(e.name) + "': ";
        if (e.offset % m_alignment != 0)
            r.fail(at + "data offset " + std::to_string(e.offset) + " is not a multiple of the alignment " +
                   std::to_string(m_alignment));
        if (e.bytes > 0 && (m_dataStart > fileSize || e.offset > dataSize || e.bytes > dataSize - e.offset))
            r.fail(at + "data [" + std::to_string(e.offset) + ", +" + std::to_string(e.bytes) +
                   ") runs past the end of the file (data section holds " + std::to_string(dataSize) +
                   " bytes)");
    }
    std::vector<const GgufTensorEntry*> byOffset;
    for (const auto& e : m_entries)
        if (e.bytes > 0) byOffset.push_back(&e);
    std::sort(byOffset.begin(), byOffset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (std::size_t k = 1; k < byOffset.size(); ++k)
        if (byOffset[k - 1]->offset + byOffset[k - 1]->bytes > byOffset[k]->offset)
            r.fail("tensor '" + printable(byOffset[k]->name) + "': data overlaps tensor '" +
                   printable(byOffset[k - 1]->name) + "'");

    for (const auto& e : m_entries) {
        const GgmlType t = static_cast<GgmlType>(e.type);
        TensorInfo info;
        info.name = e.name;
        info.dtype = t == GgmlType::F16 ? DType::F16 : t == GgmlType::BF16 ? DType::BF16 : DType::F32;
        info.shape = e.shape;
        info.byteSize =
            static_cast<std::uint64_t>(e.elements) * static_cast<std::uint64_t>(storageBytes(info.dtype));
        info.location = std::string(ggmlTypeTraits(e.type)->name) + " at offset " +
                        std::to_string(m_dataStart + e.offset);
        if (t != GgmlType::F32 && t != GgmlType::F16 && t != GgmlType::BF16)
            info.storedType = ggmlTypeTraits(e.type)->name;
        m_infos.push_back(std::move(info));
    }
}

std::optional<std::int64_t> GgufSource::integerValue(const std::string& key) const {
    const auto it = m_metadata.find(key);
    if (it == m_metadata.end()) return std::nullopt;
    const GgufValue& v = it->second;
    switch (v.type) {
    case GgufValue::U8:
    case GgufValue::U16:
    case GgufValue::U32:
    case GgufValue::U64:
        if (v.u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
        return static_cast<std::int64_t>(v.u);
    case GgufValue::I8:
    case GgufValue::I16:
    case GgufValue::I32:
    case GgufValue::I64:
        return v.i;
    default:
        return std::nullopt;
    }
}

std::string GgufSource::stringValue(const std::string& key) const {
    const auto it = m_metadata.find(key);
    return it != m_metadata.end() && it->second.type == GgufValue::String ? it->second.s : std::string();
}

const GgufTensorEntry& GgufSource::entry(const std::string& name) const {
    const auto it = m_index.find(name);
    if (it == m_index.end()) {
        if (const UnlistedEntry* u = findUnlisted(name))
            throw FileError(m_path + ": tensor '" + printable(name) + "': " + u->reason);
        throw FileError(m_path + ": no tensor named '" + printable(name) + "'");
    }
    return m_entries[it->second];
}

Tensor GgufSource::decode(const GgufTensorEntry& e, std::int64_t firstRow, std::int64_t rows) const {
    const GgmlType t = static_cast<GgmlType>(e.type);
    const GgmlTypeTraits tr = *ggmlTypeTraits(e.type);
    Shape shape = e.shape;
    std::int64_t rowElems = e.elements;
    if (!shape.empty()) {
        rowElems = shape[0] == 0 ? 0 : e.elements / shape[0];
        shape[0] = rows;
    }
    const std::int64_t firstElem = firstRow * rowElems, elems = rows * rowElems;
    if (!isQuantized(t)) {
        const DType dt = t == GgmlType::F16 ? DType::F16 : t == GgmlType::BF16 ? DType::BF16 : DType::F32;
        return Tensor(dt, std::move(shape), tensorData(e) + firstElem * tr.blockBytes, m_mapping);
    }
    Tensor out(DType::F32, std::move(shape));
    if (elems == 0) return out;
    // Rows of a matrix are whole blocks; the rows of a 1-D tensor are single elements, so decode
    // the blocks around them and keep the slice.
    const std::int64_t firstBlock = firstElem / tr.blockElems;
    const std::int64_t endBlock = (firstElem + elems + tr.blockElems - 1) / tr.blockElems;
    const std::byte* p = tensorData(e) + firstBlock * tr.blockBytes;
    float* y = reinterpret_cast<float*>(out.mutableData());
    if (firstElem % tr.blockElems == 0 && elems % tr.blockElems == 0) {
        dequantizeBlocks(t, p, endBlock - firstBlock, y);
    } else {
        std::vector<float> blocks(static_cast<std::size_t>((endBlock - firstBlock) * tr.blockElems));
        dequantizeBlocks(t, p, endBlock - firstBlock, blocks.data());
        std::memcpy(y, blocks.data() + firstElem % tr.blockElems,
                    static_cast<std::size_t>(elems) * sizeof(float));
    }
    return out;
}

Tensor GgufSource::load(const std::string& name) const {
    const GgufTensorEntry& e = entry(name);
    return decode(e, 0, e.shape.empty() ? 1 : e.shape[0]);
}

Tensor GgufSource::loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const {
    const GgufTensorEntry& e = entry(name);
    if (e.shape.empty()) throw FileError(m_path + ": tensor '" + printable(name) + "': a scalar has no rows");
    if (begin < 0 || count < 0 || begin > e.shape[0] || count > e.shape[0] - begin)
        throw FileError(m_path + ": tensor '" + printable(name) + "': rows [" + std::to_string(begin) + ", " +
                        std::to_string(begin + count) + ") are outside " + toString(e.shape));
    return decode(e, begin, count);
}

void GgufSource::release(const std::string& name) const {
    const auto it = m_index.find(name);
    if (it == m_index.end()) return;
    const GgufTensorEntry& e = m_entries[it->second];
    m_mapping->release(m_dataStart + e.offset, e.bytes);
}

} // namespace ql
