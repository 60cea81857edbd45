#include "io/run_files.h"

#include "base/error.h"
#include "io/tensor_source.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace ql {
namespace {

fs::path canonicalOf(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::absolute(path).lexically_normal() : p;
}

} // namespace

bool sameFile(const std::string& a, const std::string& b) {
    if (a.empty() || b.empty()) return false;
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return canonicalOf(a) == canonicalOf(b);
}

std::string modelFolderOf(const std::string& modelPath) {
    std::error_code ec;
    if (fs::is_directory(modelPath, ec)) return fs::absolute(modelPath).string();
    return fs::absolute(modelPath).parent_path().string();
}

void RunFiles::input(const std::string& path, const std::string& role) {
    if (!path.empty()) m_inputs.push_back({path, role});
}

void RunFiles::input(const TensorSource& source, const std::string& role) {
    for (const std::string& f : source.files())
        input(f, role);
}

void RunFiles::protectFolder(const std::string& folder, const std::string& why) {
    if (!folder.empty()) m_folders.push_back({folder, why});
}

void RunFiles::output(const std::string& path, const std::string& flag) {
    if (!path.empty()) m_outputs.push_back({path, flag});
}

void RunFiles::weightsOutput(const std::string& path, const std::string& flag) {
    if (!path.empty()) m_outputs.push_back({path, flag, true});
}

void RunFiles::check() const {
    for (std::size_t i = 0; i < m_outputs.size(); ++i) {
        const Entry& out = m_outputs[i];
        // Outputs are renamed into place: over a device, FIFO or socket (/dev/stdout, a pipe) that
        // would replace the node itself, never write to it.
        std::error_code ec;
        const auto status = fs::status(out.path, ec);
        if (fs::exists(status) && !fs::is_regular_file(status))
            throw FileError(out.path + ": " + out.label +
                            " is not a regular file (a folder, device, FIFO or socket); QuantLens writes a "
                            "file by renaming it into place: name a file");
        for (const Entry& in : m_inputs)
            if (sameFile(out.path, in.path))
                throw FileError(out.path + ": " + out.label + " would write over " + in.label + " (" +
                                in.path + "); choose another output file");
        for (const Entry& folder : m_folders)
            if (out.weights && sameFile(canonicalOf(out.path).parent_path().string(), folder.path))
                throw FileError(out.path + ": " + out.label + " would be written in " + folder.path + ", " +
                                folder.label + "; write it to another folder");
        for (std::size_t j = 0; j < i; ++j)
            if (sameFile(out.path, m_outputs[j].path))
                throw FileError(out.path + ": " + out.label + " and " + m_outputs[j].label +
                                " name the same file; give each its own");
    }
}

} // namespace ql
