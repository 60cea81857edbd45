#pragma once
// GGUF files (llama.cpp's model format, versions 2 and 3) as a TensorSource. Opening parses the
// header (metadata and tensor infos) and checks every tensor lies inside the file; F32/F16/BF16
// tensors borrow the memory mapping, block-quantized ones are decoded to f32 on load.
#include "io/mapped_file.h"
#include "io/tensor_source.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ql {

/// One metadata value. Type ids follow gguf.h (0 u8 ... 12 f64); an array keeps its element type
/// and its elements (which may be arrays themselves).
struct GgufValue {
    enum Type : std::uint32_t { U8, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64 };
    Type type = U8;
    std::uint64_t u = 0; // unsigned integers and bool
    std::int64_t i = 0;  // signed integers
    double f = 0;        // f32 and f64
    std::string s;
    // Arrays: numbers stay packed in `raw` as in the file (a token-type table is one allocation,
    // not one value per entry); strings and arrays are kept in `elements`.
    Type elementType = U8;
    std::uint64_t count = 0;
    std::string raw;
    std::vector<GgufValue> elements;
    /// Element k of an array (k < count).
    GgufValue at(std::uint64_t k) const;
    /// For display: numbers, quoted strings, "[a, b, ...]" (long arrays shortened).
    std::string toString() const;
};

/// A tensor as the header describes it.
struct GgufTensorEntry {
    std::string name;
    std::uint32_t type = 0;        // ggml type id
    std::vector<std::uint64_t> ne; // ggml's order: ne[0] is the contiguous dimension
    std::uint64_t offset = 0;      // from the start of the data section
    std::uint64_t bytes = 0;
    std::int64_t elements = 0;
    Shape shape; // row-major: ne reversed
};

class GgufSource : public TensorSource {
public:
    /// Throws FileError naming the file (and tensor) and the reason for any malformed header.
    static std::unique_ptr<GgufSource> open(const std::string& path);

    const std::string& path() const override { return m_path; }
    const std::vector<TensorInfo>& tensors() const override { return m_infos; }
    /// Tensors of ggml types QuantLens does not decode (IQ4_XS, I32, ...), with their type: the rest
    /// of the file is listed and read as usual.
    const std::vector<UnlistedEntry>& unlisted() const override { return m_unlisted; }
    Tensor load(const std::string& name) const override;
    /// Decodes only the blocks of the rows asked for.
    Tensor loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const override;
    void release(const std::string& name) const override;
    /// Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 tensors' codes; K-quants and others: nullopt, `why` says so.
    std::optional<StoredQuantization> storedCodes(const std::string& name, std::string* why) const override;
    /// llama.cpp's row order of q and k in a llama-family model (io/llama_rows.h).
    std::optional<LlamaRows> convertedRows(const std::string& name, std::int64_t rows) const override;

    /// The GGUF version, then every metadata key in key order with its value as toString shows it.
    std::vector<ModelInfoEntry> modelInfo() const override;

    std::uint32_t version() const { return m_version; }
    std::uint64_t alignment() const { return m_alignment; }
    const std::map<std::string, GgufValue>& metadata() const { return m_metadata; }
    /// A metadata value of any integer type; nullopt when absent, of another type, or past int64.
    std::optional<std::int64_t> integerValue(const std::string& key) const;
    /// A string metadata value; empty when absent or not a string.
    std::string stringValue(const std::string& key) const;
    /// Throws FileError when there is no such tensor.
    const GgufTensorEntry& entry(const std::string& name) const;
    const std::byte* tensorData(const GgufTensorEntry& e) const {
        return m_mapping->data() + m_dataStart + e.offset;
    }

private:
    void parse();
    Tensor decode(const GgufTensorEntry& e, std::int64_t firstRow, std::int64_t rows) const;

    std::string m_path;
    std::shared_ptr<const MappedFile> m_mapping;
    std::uint32_t m_version = 0;
    std::uint64_t m_alignment = 32;
    std::uint64_t m_dataStart = 0;
    std::map<std::string, GgufValue> m_metadata;
    std::vector<GgufTensorEntry> m_entries;
    std::vector<TensorInfo> m_infos;
    std::unordered_map<std::string, std::size_t> m_index;
    std::vector<UnlistedEntry> m_unlisted; // tensors of ggml types QuantLens does not decode
};

/// True when the first bytes are GGUF's magic.
bool hasGgufMagic(const char* head, std::size_t n);

} // namespace ql
