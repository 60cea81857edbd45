#include "job/importance.h"
#include "job/job.h"

#include <filesystem>

namespace ql {

void addRequestInputs(RunFiles& files, const JobRequest& request) {
    if (request.source) files.input(*request.source);
    if (request.importance) files.input(request.importance->file().path, "the importance file");
    for (const auto& [text, role] : {std::pair{request.params.scales, "the scale file"},
                                     std::pair{request.params.zeroPoints, "the zero-point file"}}) {
        std::error_code ec;
        if (text.empty()) continue;
        if (std::filesystem::is_regular_file(text, ec))
            files.input(text, role);
        else if (const auto ref = parseTensorRef(text))
            files.input(ref->file, role);
    }
}

void refuseOutputsOverInputs(const JobRequest& request,
                             const std::vector<std::pair<std::string, std::string>>& outputs,
                             RunFiles files) {
    addRequestInputs(files, request);
    for (const auto& [path, flag] : outputs)
        files.output(path, flag);
    files.check();
}

} // namespace ql
