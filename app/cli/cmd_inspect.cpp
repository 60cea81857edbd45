#include "cli/commands.h"
#include "io/inspect_report.h"
#include "io/model_formats.h"
#include "io/printable.h"
#include "io/tensor_source.h"
#include "quantlens/config.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace ql::cli {

CLI::App* addInspect(CLI::App& parent, InspectOptions& o) {
    auto* cmd = parent.add_subcommand(
        "inspect", "List the tensors of a model file: name, dtype, shape, size, and where "
                   "each is stored (file and offset; a GGUF tensor's own type; an ONNX QDQ weight's "
                   "scheme: per-tensor, per-axis a or block b).");
    cmd->add_option("FILE", o.file,
                    "Model file (" + modelFormatNames() +
                        "; a sharded safetensors checkpoint by its .safetensors.index.json)")
        ->required();
    cmd->add_flag("--json", o.json, "Print JSON instead of a table");
    return cmd;
}

int runInspect(const InspectOptions& o) {
    const auto source = openTensorSource(o.file);
    const auto& tensors = source->tensors();
    const auto& left = source->unlisted();
    if (o.json) {
        // Names from a file may hold bytes that are not UTF-8 (HDF5 allows any): shown as U+FFFD.
        std::puts(inspectReport(*source, o.file)
                      .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
                      .c_str());
        return 0;
    }
    // Names and locations (an ONNX external-data file name, a QDQ node's inputs) come from the file.
    std::size_t width = 6;
    std::uint64_t bytes = 0;
    for (const auto& t : tensors)
        width = std::max(width, printable(t.name).size()), bytes += t.byteSize;
    std::printf("%-*s %-8s %-20s %14s  %s\n", static_cast<int>(width), "tensor", "dtype", "shape", "bytes",
                "stored");
    for (const auto& t : tensors)
        std::printf("%-*s %-8s %-20s %14llu  %s\n", static_cast<int>(width), printable(t.name).c_str(),
                    std::string(nameOf(t.dtype)).c_str(), toString(t.shape).c_str(),
                    static_cast<unsigned long long>(t.byteSize), printable(t.location).c_str());
    std::printf("%zu %s, %llu bytes\n", tensors.size(), tensors.size() == 1 ? "tensor" : "tensors",
                static_cast<unsigned long long>(bytes));
    for (const auto& [name, reason] : left) // never opened, so never checked: printed escaped
        std::printf("not listed: %s: %s\n", printable(name).c_str(), printable(reason).c_str());
    return 0;
}

} // namespace ql::cli
