#pragma once
// What quantize, compare and sweep share: the core/job request their flags describe.
#include <string>

#include "backend/registry.h"
#include "cli/spec_options.h"
#include "job/job.h"

namespace ql::cli {

/// Opens FILE, builds the spec and the backend list: everything a job needs but its tensors.
/// Throws UsageError for bad flags or an unknown backend, FileError for a file that cannot be opened.
JobRequest makeRequest(const std::string& file, const SpecOptions& spec, const std::string& backend, int repeat = 1);

/// The named backend, or a UsageError listing the choices.
const Backend& pickBackend(const BackendRegistry& registry, const std::string& name);

} // namespace ql::cli
