#include "io/tensor_source.h"

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/llama_rows.h"
#include "io/mapped_file.h"
#include "io/model_formats.h"
#include "io/printable.h"
#include "io/safetensors_source.h"
#include "io/untrusted_json.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <new>

namespace fs = std::filesystem;

namespace ql {

namespace {

/// The first at most `maxBytes` bytes of already printable `text`, cut between code points.
std::string capped(std::string text, std::size_t maxBytes) {
    if (text.size() <= maxBytes) return text;
    std::size_t end = 0;
    char32_t cp = 0;
    while (end < text.size()) {
        const std::size_t n = utf8At(text, end, cp);
        const std::size_t step = n ? n : 1;
        if (end + step > maxBytes) break;
        end += step;
    }
    text.resize(end);
    return text + "\u2026";
}

} // namespace

ModelInfoEntry modelInfoEntry(std::string_view key, std::string_view value) {
    constexpr std::size_t kMaxBytes = 240;
    return {capped(printable(key), kMaxBytes), capped(printable(value), kMaxBytes)};
}

bool isWeightTensor(const TensorInfo& info) {
    return isFloating(info.dtype) && !info.shape.empty() && elementCount(info.shape) > 0;
}

void TensorSource::buildIndex() const {
    std::call_once(m_indexed, [this] {
        const auto& listed = tensors();
        m_byName.reserve(listed.size());
        for (std::size_t i = 0; i < listed.size(); ++i)
            m_byName.emplace(listed[i].name, i); // the first of a name, as a scan in order finds
        const auto& left = unlisted();
        m_unlistedByName.reserve(left.size());
        for (std::size_t i = 0; i < left.size(); ++i)
            m_unlistedByName.emplace(left[i].name, i);
    });
}

const TensorInfo* TensorSource::find(const std::string& name) const {
    buildIndex();
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : &tensors()[it->second];
}

const std::vector<UnlistedEntry>& TensorSource::unlisted() const {
    static const std::vector<UnlistedEntry> none;
    return none;
}

const UnlistedEntry* TensorSource::findUnlisted(const std::string& name) const {
    buildIndex();
    const auto it = m_unlistedByName.find(name);
    return it == m_unlistedByName.end() ? nullptr : &unlisted()[it->second];
}

namespace {

// Names are printed as they are: one with a control character is refused (hasControlCharacter).
void refuseControlCharacters(const TensorSource& source, const std::string& path) {
    for (const TensorInfo& t : source.tensors())
        if (hasControlCharacter(t.name))
            throw FileError(
                path + ": tensor \"" + printable(t.name) +
                "\": its name holds a control character; refused (names are printed as they are)");
}

std::unique_ptr<TensorSource> openByKind(const std::string& path);

} // namespace

const QdqWeight* TensorSource::qdq(const std::string& name) const {
    (void)name;
    return nullptr;
}

std::optional<LlamaRows> TensorSource::convertedRows(const std::string& name, std::int64_t rows) const {
    (void)name;
    (void)rows;
    return std::nullopt;
}

std::optional<std::string> TensorSource::textAttribute(const std::string& object,
                                                       const std::string& key) const {
    (void)object;
    (void)key;
    return std::nullopt;
}

std::unique_ptr<TensorSource> openTensorSource(const std::string& path) {
    try {
        auto source = openByKind(path);
        refuseControlCharacters(*source, path);
        return source;
    } catch (const std::bad_alloc&) { // past what the readers bound: still, say which file
        throw FileError(path + ": out of memory reading its tensor list");
    }
}

namespace {

std::unique_ptr<TensorSource> openByKind(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw FileError(path + ": no such file");
    if (fs::is_directory(path, ec)) {
        // A Hugging Face model folder: the index if sharded, else its single safetensors file.
        const fs::path dir(path);
        if (fs::exists(dir / "model.safetensors.index.json", ec))
            return SafetensorsSource::openIndex((dir / "model.safetensors.index.json").string());
        if (fs::exists(dir / "model.safetensors", ec))
            return SafetensorsSource::openFile((dir / "model.safetensors").string());
        throw FileError(path + ": folder holds no model.safetensors or model.safetensors.index.json");
    }
    requireRegularFile(path); // before anything opens it: a FIFO would block
    return modelFormatOf(path).open(path);
}

} // namespace

std::optional<TensorRef> parseTensorRef(const std::string& text) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
    return TensorRef{text.substr(0, colon), text.substr(colon + 1)};
}

std::vector<float> loadTensorValues(const TensorSource& source, const std::string& tensor,
                                    const std::string& role) {
    if (!source.find(tensor))
        throw FileError(source.path() + ": " + tensor + ": no such tensor (named as " + role + ")");
    const Tensor t = source.load(tensor);
    std::vector<float> values = t.toFloatVector();
    // Integers (zero points, group ends) pass through fp32: beyond 2^24 they would silently change.
    if (!isFloating(t.dtype()))
        for (std::size_t i = 0; i < values.size(); ++i)
            if (std::fabs(values[i]) > 16777216.0f)
                throw FileError(source.path() + ": " + tensor + ": entry " + std::to_string(i) + " (" + role +
                                ") is beyond 2^24, which fp32 cannot hold exactly");
    return values;
}

std::vector<float> loadTensorValues(const TensorRef& ref, const std::string& role) {
    return loadTensorValues(*openTensorSource(ref.file), ref.tensor, role);
}

} // namespace ql
