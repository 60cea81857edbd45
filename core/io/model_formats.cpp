#include "io/model_formats.h"

#include "base/error.h"
#include "io/gguf_source.h"
#include "io/onnx_source.h"
#include "io/safetensors_source.h"
#include "quantlens/config.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string_view>
#if QUANTLENS_HAVE_HDF5
#include "io/hdf5_source.h"
#endif

namespace fs = std::filesystem;

namespace ql {
namespace {

bool hdf5Magic(const char* head, std::size_t n) {
    return n >= 8 && std::string_view(head, 8) == std::string_view("\x89HDF\r\n\x1a\n", 8);
}
bool zipMagic(const char* head, std::size_t n) {
    return n >= 4 && std::string_view(head, 4) == std::string_view("PK\x03\x04", 4);
}
// An 8-byte header length, then the JSON header.
bool safetensorsMagic(const char* head, std::size_t n) {
    return n >= 9 && head[8] == '{';
}
bool indexMagic(const char* head, std::size_t n) {
    return n >= 1 && head[0] == '{';
}

std::size_t readHead(const std::string& path, std::array<char, 9>& head) {
    std::ifstream in(path, std::ios::binary);
    in.read(head.data(), head.size());
    return static_cast<std::size_t>(in.gcount());
}

std::unique_ptr<TensorSource> openSafetensors(const std::string& path) {
    return SafetensorsSource::openFile(path);
}
std::unique_ptr<TensorSource> openIndex(const std::string& path) {
    return SafetensorsSource::openIndex(path);
}
std::unique_ptr<TensorSource> openGguf(const std::string& path) {
    return GgufSource::open(path); // reports a bad magic
}
std::unique_ptr<TensorSource> openOnnx(const std::string& path) {
    return openOnnxSource(path); // protobuf has no magic: by extension
}
std::unique_ptr<TensorSource> openHdf5(const std::string& path) {
    std::array<char, 9> head{};
    if (zipMagic(head.data(), readHead(path, head)))
        throw FileError(path +
                        ": a zip archive, not HDF5 (a Keras 3 .keras file: extract its model.weights.h5)");
#if QUANTLENS_HAVE_HDF5
    return openHdf5Source(path); // reports "not an HDF5 file" with the library's reason
#else
    throw FileError(path +
                    ": this build of QuantLens has no HDF5 support (configure with -DQUANTLENS_HDF5=ON)");
#endif
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
}

} // namespace

const std::vector<ModelFormat>& modelFormats() {
    static const std::vector<ModelFormat> formats = {
        {"safetensors", {".safetensors"}, safetensorsMagic, false, openSafetensors},
        {"safetensors", {".index.json"}, indexMagic, false, openIndex}, // a sharded checkpoint's index
        {"HDF5", {".h5", ".hdf5", ".keras", ".he5"}, hdf5Magic, true, openHdf5},
        {"GGUF", {".gguf"}, hasGgufMagic, true, openGguf},
        {"ONNX", {".onnx"}, nullptr, false, openOnnx},
    };
    return formats;
}

const ModelFormat& modelFormatOf(const std::string& path) {
    std::array<char, 9> head{};
    const std::size_t n = readHead(path, head);
    const std::string name = lower(fs::path(path).filename().string());
    const auto& formats = modelFormats();
    for (const ModelFormat& f : formats)
        if (f.magicDecides && f.magic(head.data(), n)) return f;
    for (const ModelFormat& f : formats)
        for (const std::string& extension : f.extensions)
            if (endsWith(name, extension)) return f;
    for (const ModelFormat& f : formats)
        if (!f.magicDecides && f.magic && f.magic(head.data(), n)) return f;
    return formats.front();
}

std::string modelFormatNames() {
    std::vector<std::string> names;
    for (const ModelFormat& f : modelFormats())
        if (std::find(names.begin(), names.end(), f.name) == names.end()) names.push_back(f.name);
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
}

std::string modelFileDialogFilter() {
    std::string patterns;
    for (const ModelFormat& f : modelFormats())
        for (const std::string& extension : f.extensions)
            patterns += (patterns.empty() ? "*" : " *") + extension;
    return "Model files (" + patterns + ");;All files (*)";
}

} // namespace ql
