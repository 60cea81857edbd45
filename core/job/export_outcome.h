#pragma once
// An export of a model run, the same for both front ends: what the target can store is decided during
// the run (a tensor it cannot store is passed through and reported so), then the outcome is written
// as it was reported. So the report and the export always agree on what was quantized.
#include "io/export.h"
#include "job/job.h"

#include <string>

namespace ql {

struct ExportTarget {
    std::string path;                                      // .safetensors, or .h5 / .hdf5 for HDF5
    ExportLayout layout = ExportLayout::CompressedTensors; // safetensors only
    std::string model; // the source model's path: the export's metadata and config.json's origin
    /// One shard's part of a fanned-out run: no config.json (each would hold only its part), and
    /// written even when every tensor of the part was kept or failed.
    bool part = false;
};

/// True for an HDF5 file name (.h5, .hdf5).
bool isHdf5Export(const std::string& path);

/// Why `target` cannot store `q` (empty: it can); an empty function when it stores everything.
std::function<std::string(const QuantizedTensor&)> unstorableFor(const ExportTarget& target);

/// The options of a run whose outcome is exported to `target`: codes kept, and what the target cannot
/// store passed through (a whole-model run) or failed (named tensors, `passThrough` false).
ModelJobOptions exportJobOptions(const ExportTarget& target, bool passThrough);

/// Writes the run's quantized tensors, its kept ones as they are, and its failed ones' names and
/// reasons in the metadata; a compressed-tensors export also gets config.json beside it, checked
/// before anything is written. Throws FileError, writing nothing, when no tensor was quantized (a
/// part: when it holds nothing at all).
void exportOutcome(const ModelOutcome& outcome, const ExportTarget& target);

} // namespace ql
