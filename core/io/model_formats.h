#pragma once
// The model formats QuantLens reads, in one table: the names they go by, the file names that are
// theirs, how a file shows it is one, and what opens it. openTensorSource dispatches through it; the
// CLI's help and the app's file dialogs list it.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ql {

class TensorSource;

struct ModelFormat {
    std::string name;                    // as help names it: "safetensors", "HDF5", "GGUF", "ONNX"
    std::vector<std::string> extensions; // lower case, with the dot: ".safetensors", ".index.json"
    /// Whether a file's first bytes show this format; nullptr: nothing does (it goes by extension).
    bool (*magic)(const char* head, std::size_t n) = nullptr;
    /// A magic that decides before the extension does (GGUF's, HDF5's); a weak one (a JSON brace)
    /// only names a file whose extension is no format's.
    bool magicDecides = false;
    std::unique_ptr<TensorSource> (*open)(const std::string& path) = nullptr;
};

/// Every format, in the order they are tried.
const std::vector<ModelFormat>& modelFormats();

/// The format that opens the regular file `path`: a deciding magic first, then the extension, then
/// a weak magic; safetensors otherwise (its strict parser says what is wrong).
const ModelFormat& modelFormatOf(const std::string& path);

/// The formats' names for help text: "safetensors, HDF5, GGUF or ONNX".
std::string modelFormatNames();

/// A file dialog's filter: "Model files (*.safetensors *.index.json ...);;All files (*)".
std::string modelFileDialogFilter();

} // namespace ql
