#pragma once
// What quantize, compare and sweep share: the core/job request their flags describe.
#include "backend/registry.h"
#include "cli/spec_options.h"
#include "job/job.h"
#include "job/run_notes.h"

#include <string>

namespace ql::cli {

/// Opens FILE, builds the spec and the backend list: everything a job needs but its tensors.
/// Throws UsageError for bad flags or an unknown backend, FileError for a file that cannot be opened.
/// With `importance` (a file of activation statistics), reports gain the importance-weighted error.
JobRequest makeRequest(const std::string& file, const SpecOptions& spec, const std::string& backend,
                       int repeat = 1, const std::string& importance = {});

/// --importance FILE, the same words on every command that takes it.
void addImportanceOption(CLI::App& cmd, std::string& importance);
/// The run's notes (core/job/run_notes.h) on stderr, a "quantlens-cli: note:" line each.
void printNotes(const std::string& file, const std::vector<RunNote>& notes);
/// One note on stderr for the quantized tensors the importance file had nothing for (or nothing
/// of their size), by reason.
void noteMissingImportance(const std::string& file, const std::vector<TensorReport>& reports);

/// The named backend, or a UsageError listing the choices.
const Backend& pickBackend(const BackendRegistry& registry, const std::string& name);

} // namespace ql::cli
